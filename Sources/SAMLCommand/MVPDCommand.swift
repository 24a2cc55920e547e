import AppleSSO
import ArgumentParser
import Foundation

struct MVPDCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mvpd",
        abstract: "Read an MVPD configuration (v1 JSON or XML, v2 JSON) and print MVPDs or Apple picker lists as JSON."
    )

    @Argument(help: "The configuration file.")
    var file: String

    @Flag(help: "Print supportedAccountProviderIdentifiers (platformMappingId of every picker-supported MVPD).")
    var supported = false

    @Option(help: "Print featuredAccountProviderIdentifiers for these MVPD ids, in this order (comma-separated).")
    var featured: String?

    @Option(help: "Print this MVPD only.")
    var mvpd: String?

    func run() throws {
        let configuration = try rejectingOnError { try MVPDConfiguration.decode(try StandardStreams.readAll(file)) }
        let output: Any
        if supported {
            output = configuration.supportedProviderIdentifiers
        } else if let featured {
            output = configuration.featuredProviderIdentifiers(featured.split(separator: ",").map(String.init))
        } else if let mvpd {
            guard let found = configuration.mvpd(id: mvpd) else {
                throw CommandFailure(
                    status: CommandFailure.rejectedStatus, code: "mvpd.unknown", message: "expected an MVPD with id \(mvpd), found none")
            }
            output = Self.object(found)
        } else {
            output = configuration.mvpds.map(Self.object)
        }
        let data = try JSONSerialization.data(withJSONObject: output, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        StandardStreams.writeOutput(String(decoding: data, as: UTF8.self) + "\n")
    }

    static func object(_ mvpd: MVPD) -> [String: Any] {
        [
            "id": mvpd.id, "displayName": mvpd.displayName ?? NSNull(), "enablePlatformServices": mvpd.enablePlatformServices,
            "boardingStatus": mvpd.boardingStatus?.rawValue ?? NSNull(), "displayInPlatformPicker": mvpd.displayInPlatformPicker,
            "platformMappingId": mvpd.platformMappingId ?? NSNull(), "requiredMetadataFields": mvpd.requiredMetadataFields,
            "enforcePlatformPermissions": mvpd.enforcePlatformPermissions,
        ]
    }
}
