import Configuration

/// How the service's settings are spelt. The settings themselves are the keys
/// ``ServiceConfiguration/init(reading:)`` reads, one read line each (``SettingsReader`` records them
/// with how each may be given; ``known`` reads them once): the file's members, the environment's
/// `SAML_SERVICE_*` variables and the command line's options are judged against them before anything is
/// read, and docs/service.md's table against the same (a test holds them in step). A new setting is its
/// property, its read line and its row.
///
/// A key is camelCase, dotted below an object (`tracing.endpoint`). Each source spells it its way, by
/// swift-configuration's rules: the file's member, `SAML_SERVICE_` and the key in upper snake case in the
/// environment (`storeTimeoutSeconds` → `SAML_SERVICE_STORE_TIMEOUT_SECONDS`), and `--` and the key in
/// kebab case on the command line (`--store-timeout-seconds`; the options are parsed by
/// ``ServiceConfiguration/load(contentsOf:arguments:environment:accessReporter:)``, which maps them to the
/// environment's names).
///
/// Each component's settings are read by its own function of ``ServiceConfiguration/init(reading:)``
/// (the listener, the store, verification, answers, callers, limits, logs), the tracing settings from
/// their own scope (`tracing`). A default stays with its property, not at the read: a configuration built
/// in code (tests, an embedding program) must have the same defaults as one read from a file.
///
/// The listener's `host` and `port` are read here rather than through Hummingbird's
/// `ApplicationConfiguration(reader:)`: that initializer checks no range (a port of 70000 is refused here
/// at start-up), reads two more keys (`unixDomainSocket`, `serverName`) the service does not support, and a
/// configuration built in code (tests, an embedding program) has no reader to hand it.
enum ServiceSettings {
    /// How a setting may be given.
    struct Setting: Sendable {
        let key: String
        /// A secret: never on the command line (every user of the machine can read a process's
        /// arguments), never quoted in an error or a log, marked secret for swift-configuration's reporters.
        var isSecret = false
        /// Not in the file: `allowDevelopmentKeys` belongs to the one who starts the process, not to a
        /// file that may be copied from a development machine to production.
        var inFile = true
    }

    /// Every setting by its key: what ``ServiceConfiguration/init(reading:)`` reads, found once by reading
    /// from no source (every key is read whatever the sources hold: a test holds it so).
    static let known: [String: Setting] = {
        let nothing = ConfigReader(provider: InMemoryProvider(name: "no source", values: [:]))
        let settings = SettingsReader(reader: nothing, overrides: nothing, file: .none, environment: [:])
        _ = try? ServiceConfiguration(reading: settings)
        return settings.catalogue.settings
    }()

    /// The environment's prefix: `SAML_SERVICE_` before the key's upper snake case.
    static let environmentScope = "saml.service"

    /// The settings whose value is a map (a JSON object in the file; `name=value` entries, comma-separated,
    /// in the environment and on the command line: a map's keys, SAML attribute names, hold dots, which
    /// swift-configuration reads as nesting).
    static let maps: Set<String> = ["userMetadataMapping", "mvpdAuthenticationTTLSeconds"]

    /// The environment variable of a key, as swift-configuration's environment provider spells it.
    static func environmentName(_ key: String) -> String {
        spelled(environmentScope + "." + key, separator: "_").uppercased()
    }

    /// The environment variable an option stands for: `--store-timeout-seconds` →
    /// `SAML_SERVICE_STORE_TIMEOUT_SECONDS` (``optionName(_:)`` and ``environmentName(_:)`` split a key
    /// alike).
    static func environmentName(option: String) -> String {
        environmentName("") + option.dropFirst(2).uppercased().replacingOccurrences(of: "-", with: "_")
    }

    /// The command-line option of a key, spelt as swift-configuration's command-line provider would (that
    /// provider itself is not used: it cuts every value at its commas).
    static func optionName(_ key: String) -> String {
        "--" + spelled(key, separator: "-").lowercased()
    }

    /// The key's components joined by `separator`, which also splits each camelCase word; any other
    /// character than a letter or a digit becomes `separator`.
    private static func spelled(_ key: String, separator: Character) -> String {
        var name = ""
        var previousIsLowercase = false
        for character in key {
            if character == "." || !(character.isLetter || character.isNumber) {
                name.append(separator)
            } else {
                if previousIsLowercase && character.isUppercase { name.append(separator) }
                name.append(character)
            }
            previousIsLowercase = character.isLowercase
        }
        return name
    }
}
