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
        let input = try StandardStreams.readAll(file)
        let output = try rejectingOnError { try Cookbook.encode(utf8: input) }
        StandardStreams.writeOutput(output)
    }
}
