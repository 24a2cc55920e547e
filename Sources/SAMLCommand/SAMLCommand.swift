import ArgumentParser
import SAML

/// The `saml` tool. Thin: every subcommand parses its arguments, calls the library, prints.
///
/// Exit status: 0 success, 1 the input was rejected (`error: <code>: <message>` on stderr),
/// 2 usage or I/O error.
@main
struct SAMLCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "saml",
        abstract: "Decode, encode and check SAML responses from Apple single sign-on.",
        version: SAMLVersion.description,
        subcommands: [
            VectorsCommand.self, BenchCommand.self, VerifyCommand.self, InspectCommand.self, GenerateCommand.self, MVPDCommand.self,
            PFSCommand.self, ExchangeCommand.self, MetadataCommand.self, SPMetadataCommand.self, NormalizeCommand.self, EncodeCommand.self,
            DecodeCommand.self,
        ]
    )

    static func main() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let failure as CommandFailure {
            if !failure.quiet { StandardStreams.writeError("error: \(failure.code): \(failure.message)\n") }
            terminate(failure.status)
        } catch {
            // Help, version and usage errors from the argument parser.
            let status = exitCode(for: error)
            if status == .success {
                StandardStreams.writeOutput(fullMessage(for: error) + "\n")
                terminate(0)
            }
            StandardStreams.writeError(fullMessage(for: error) + "\n")
            terminate(CommandFailure.usageStatus)
        }
    }
}
