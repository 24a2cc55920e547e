import SAML

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A failure that ends the command with a given status.
struct CommandFailure: Error {
    static let rejectedStatus: Int32 = 1
    static let usageStatus: Int32 = 2

    var status: Int32
    var code: String
    var message: String
    /// Already reported on stdout (JSON output): end with the status, print nothing more.
    var quiet = false

    /// The library refused the input.
    static func rejected(_ error: SAMLError) -> CommandFailure {
        CommandFailure(status: rejectedStatus, code: error.code.identifier, message: error.message)
    }

    /// The arguments cannot be used.
    static func usage(_ message: String) -> CommandFailure {
        CommandFailure(status: usageStatus, code: "usage", message: message)
    }

    /// The command could not read or write.
    static func io(_ message: String) -> CommandFailure {
        CommandFailure(status: usageStatus, code: "io", message: message)
    }
}

/// Runs a library call, turning its `SAMLError` into a rejection.
func rejectingOnError<T>(_ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let error as SAMLError {
        throw CommandFailure.rejected(error)
    }
}

/// Ends the process with `status` (ArgumentParser's `exit` would map statuses of its own).
func terminate(_ status: Int32) -> Never {
    exit(status)
}
