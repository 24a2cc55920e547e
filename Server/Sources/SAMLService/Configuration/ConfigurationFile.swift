import Foundation
import SAML

/// What swift-configuration's JSON provider does not judge of the configuration file: that it is one
/// JSON object whose members are all settings (``refuseUnknown(known:)``, once the settings are read), the
/// `tracing` object's too; the
/// maps as objects (their keys, SAML attribute names, hold dots, which the provider reads as nesting); the
/// folder its relative paths start from.
struct ConfigurationFile {
    let path: String
    /// `userMetadataMapping` and `mvpdAuthenticationTTLSeconds` when the file gives them as objects.
    let maps: [String: [String: String]]
    /// Whether the file has a `tracing` object, even an empty one (tracing on with every default).
    let hasTracing: Bool
    /// The file's members, and the `tracing` object's.
    private let members: [String]
    private let tracingMembers: [String]
    private let folder: URL

    /// No file: what ``ServiceSettings/known`` reads.
    static let none = ConfigurationFile(path: "", maps: [:], hasTracing: false, members: [], tracingMembers: [])

    private init(path: String, maps: [String: [String: String]], hasTracing: Bool, members: [String], tracingMembers: [String]) {
        self.path = path
        self.maps = maps
        self.hasTracing = hasTracing
        self.members = members
        self.tracingMembers = tracingMembers
        folder = URL(fileURLWithPath: "/")
    }

    init(path: String) throws {
        self.path = path
        folder = URL(fileURLWithPath: path).deletingLastPathComponent()
        guard let data = FileManager.default.contents(atPath: path) else {
            throw SAMLError(.configurationInvalid, "expected a readable service configuration at \(quoted(path)), found none")
        }
        guard let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
            throw SAMLError(
                .configurationInvalid, "expected a JSON object in the service configuration \(quoted(path)), found another form")
        }
        if let tracing = object["tracing"] {
            guard let tracing = tracing as? [String: Any] else {
                throw SAMLError(.configurationInvalid, "expected tracing as a JSON object in \(quoted(path)), found another value")
            }
            try Self.refuseObjects(in: tracing, prefix: "tracing.", path: path)
            tracingMembers = Array(tracing.keys)
        } else {
            tracingMembers = []
        }
        members = Array(object.keys)
        // The provider reads an object as nested keys: one where a value belongs would be silently unread.
        try Self.refuseObjects(in: object.filter { $0.key != "tracing" && !ServiceSettings.maps.contains($0.key) }, prefix: "", path: path)
        hasTracing = object["tracing"] != nil
        var maps: [String: [String: String]] = [:]
        for key in ServiceSettings.maps {
            guard let map = object[key] as? [String: Any] else { continue }
            maps[key] = try map.mapValues { value in
                if let text = value as? String { return text }
                if let number = value as? Double { return "\(number)" }
                throw SAMLError(.configurationInvalid, "expected strings or numbers as the values of \(key), found another value")
            }
        }
        self.maps = maps
    }

    /// A path of the file, relative to its folder unless absolute.
    func relative(_ file: String) -> String {
        file.hasPrefix("/") ? file : folder.appendingPathComponent(file).path
    }

    private static func refuseObjects(in members: [String: Any], prefix: String, path: String) throws {
        if let member = members.filter({ $0.value is [String: Any] }).map(\.key).sorted().first {
            throw SAMLError(.configurationInvalid, "expected a value for \(quoted(prefix + member)) in \(quoted(path)), found an object")
        }
    }

    /// A misspelt setting must not be silently ignored: a member that is not a setting the file may give
    /// (`known`, as read) is refused.
    func refuseUnknown(known: [String: ServiceSettings.Setting]) throws {
        let settings = known.values.filter(\.inFile).map(\.key)
        try Self.refuseUnknown(members, known: settings.map { String($0.prefix { $0 != "." }) }, in: "the service configuration")
        let tracing = settings.filter { $0.hasPrefix("tracing.") }.map { String($0.dropFirst("tracing.".count)) }
        try Self.refuseUnknown(tracingMembers, known: tracing, in: "tracing")
    }

    private static func refuseUnknown(_ members: [String], known: [String], in object: String) throws {
        let known = Set(known)
        if let unknown = members.sorted().first(where: { !known.contains($0) }) {
            throw SAMLError(.configurationInvalid, "expected only documented members in \(object), found \(quoted(unknown))")
        }
    }
}
