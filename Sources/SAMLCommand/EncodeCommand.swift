import AppleSSO
import ArgumentParser

struct EncodeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "encode",
        abstract: "Normalise, Base64- and URL-encode as the Adobe Pass cookbook does; write the SAMLResponse value."
    )

    @Argument(help: "The file to read, or - for standard input (the default).")
    var file: String?

    func run() throws {
        var input = try StandardStreams.readAll(file)
        try rejectingOnError {
            try Cookbook.encode(normalizingInPlace: &input) { StandardStreams.writeOutput($0) }
        }
    }
}
