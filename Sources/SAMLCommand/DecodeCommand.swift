import ArgumentParser
import SAML

struct DecodeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decode",
        abstract: "Decode a form body, form value, Base64 text or XML into the SAML response XML.",
        discussion: "Repairs (double URL-encoding, '+' read as space) are reported on stderr as 'note: <code>'."
    )

    @Argument(help: "The file to read, or - for standard input (the default).")
    var file: String?

    @Flag(help: "Reject a doubly URL-encoded value instead of repairing it.")
    var rejectDoubleEncoding = false

    @Option(help: "The largest decoded document accepted, in bytes.")
    var maxDecodedBytes: Int = SAMLResponseDecoder.Options().maximumDecodedBytes

    func run() throws {
        let input = try StandardStreams.readAll(file)
        var options = SAMLResponseDecoder.Options()
        options.doubleEncoding = rejectDoubleEncoding ? .reject : .repair
        options.maximumDecodedBytes = maxDecodedBytes
        options.maximumInputBytes = max(options.maximumInputBytes, maxDecodedBytes * 4)
        let decoded = try rejectingOnError { try SAMLResponseDecoder(options: options).decode(input) }
        for repair in decoded.repairs {
            StandardStreams.writeError("note: \(repair.rawValue)\n")
        }
        StandardStreams.writeOutput(decoded.bytes)
    }
}
