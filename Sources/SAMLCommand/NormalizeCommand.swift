import AppleSSO
import ArgumentParser

struct NormalizeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "normalize",
        abstract: "Apply the Adobe Pass cookbook's whitespace normalisation; write the result to stdout."
    )

    @Argument(help: "The file to read, or - for standard input (the default).")
    var file: String?

    func run() throws {
        let input = try StandardStreams.readAll(file)
        let output = try rejectingOnError { try Cookbook.normalize(utf8: input) }
        StandardStreams.writeOutput(output)
    }
}
