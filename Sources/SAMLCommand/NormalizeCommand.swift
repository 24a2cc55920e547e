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
        var text = try StandardStreams.readAll(file)
        try rejectingOnError { try Cookbook.normalize(inPlace: &text) }
        StandardStreams.writeOutput(text)
    }
}
