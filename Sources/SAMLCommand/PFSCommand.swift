import AppleSSO
import ArgumentParser
import Foundation

struct PFSCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pfs",
        abstract: "Encode or decode the AP-Partner-Framework-Status header.",
        subcommands: [Decode.self, Encode.self]
    )

    struct Decode: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the header's JSON.")

        @Argument(help: "The header value (Base64).")
        var value: String

        func run() throws {
            let status = try rejectingOnError { try PartnerFrameworkStatus(headerValue: value) }
            StandardStreams.writeOutput(status.json + [UInt8(ascii: "\n")])
        }
    }

    struct Encode: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print a header value.")

        @Option(help: "granted, denied, restricted or notDetermined.")
        var accessStatus: String

        @Option(help: "The provider's platformMappingId.")
        var providerId: String

        @Option(help: "The expiration, in milliseconds since the Unix epoch.")
        var expirationMs: Int64?

        func run() throws {
            let status = PartnerFrameworkStatus(
                accessStatus: .init(rawValue: accessStatus), providerID: providerId, expirationMilliseconds: expirationMs)
            StandardStreams.writeOutput(status.headerValue + "\n")
        }
    }
}
