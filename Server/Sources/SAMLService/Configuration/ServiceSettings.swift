/// Every setting of the service, by its key: the one list that the configuration file's members, the
/// environment's `SAML_SERVICE_*` variables, the command line's options and docs/service.md's table are
/// checked against (a test holds the table to it, another the reader).
///
/// A key is camelCase, dotted below an object (`tracing.endpoint`). Each source spells it its way, by
/// swift-configuration's rules: the file's member, `SAML_SERVICE_` and the key in upper snake case in the
/// environment (`storeTimeoutSeconds` → `SAML_SERVICE_STORE_TIMEOUT_SECONDS`), and `--` and the key in
/// kebab case on the command line (`--store-timeout-seconds`; the options are parsed by
/// ``ServiceConfiguration/load(contentsOf:arguments:environment:accessReporter:)``, which maps them to the
/// environment's names).
enum ServiceSettings {
    /// Where a setting may come from.
    struct Setting: Sendable {
        let key: String
        /// A secret: never on the command line (every user of the machine can read a process's
        /// arguments), never quoted in an error or a log, marked secret for swift-configuration's reporters.
        var isSecret = false
        /// Not in the file: `allowDevelopmentKeys` belongs to the one who starts the process, not to a
        /// file that may be copied from a development machine to production.
        var inFile = true
    }

    /// The environment's prefix: `SAML_SERVICE_` before the key's upper snake case.
    static let environmentScope = "saml.service"

    static let all: [Setting] = [
        // The three paths the file must name (relative to it).
        .init(key: "serviceProvider"), .init(key: "mvpdConfiguration"), .init(key: "trust"),
        // The listener: the keys Hummingbird's `ApplicationConfiguration(reader:)` reads. The service reads
        // them itself, as it reads every key here: that initializer checks no range (a port of 70000 is
        // refused here at start-up), and a configuration built in code (tests, an embedding program) has no
        // reader to hand it.
        .init(key: "host"), .init(key: "port"),
        .init(key: "allowDevelopmentKeys", inFile: false), .init(key: "allowExpiredCertificates"),
        .init(key: "spEntityID"), .init(key: "destination"),
        // The store.
        .init(key: "store"), .init(key: "allowPlaintextStore"), .init(key: "storePassword", isSecret: true),
        .init(key: "storePasswordFile"),
        .init(key: "storeTimeoutSeconds"), .init(key: "storeStartupTimeoutSeconds"), .init(key: "storeConnections"),
        .init(key: "storeBatchWindowMilliseconds"), .init(key: "profileLookupsPerSecond"), .init(key: "profileLookupConcurrency"),
        .init(key: "profileDirectoryCapacity"),
        .init(key: "memoryStoreCapacity"), .init(key: "memoryProfileCapacity"),
        // Requests and their verification.
        .init(key: "requestKeys", isSecret: true), .init(key: "requestKeysFile"),
        .init(key: "requestLifetimeSeconds"), .init(key: "maximumAgeSeconds"), .init(key: "clockSkewSeconds"),
        .init(key: "allowUnsolicited"), .init(key: "requestSigningKey"), .init(key: "requestSigningCertificate"),
        .init(key: "signaturesPerSecond"),
        .init(key: "assertionConsumerServiceURLs"), .init(key: "encryptionCertificate"),
        // What the endpoints answer.
        .init(key: "userMetadataMapping"), .init(key: "featuredMVPDs"), .init(key: "authenticationURL"),
        .init(key: "authenticationTTLSeconds"), .init(key: "mvpdAuthenticationTTLSeconds"),
        .init(key: "requestorName"), .init(key: "domains"),
        // Who may call.
        .init(key: "bearerTokens", isSecret: true), .init(key: "bearerTokensFile"),
        .init(key: "adminTokens", isSecret: true), .init(key: "adminTokensFile"),
        .init(key: "allowUnauthenticatedAPI"), .init(key: "allowReadableSecretFiles"),
        // The connections' limits.
        .init(key: "maximumConnections"), .init(key: "maximumBodyBytes"), .init(key: "maximumHeaderBytes"),
        .init(key: "headerTimeoutSeconds"), .init(key: "requestTimeoutSeconds"), .init(key: "idleTimeoutSeconds"),
        .init(key: "maximumConcurrentVerifications"), .init(key: "verificationQueue"),
        .init(key: "adminPort"), .init(key: "adminHost"), .init(key: "shutdownTimeoutSeconds"),
        // Logs and traces.
        .init(key: "logLevel"), .init(key: "logFormat"),
        .init(key: "tracing.endpoint"), .init(key: "tracing.protocol"), .init(key: "tracing.sampleRatio"),
        .init(key: "tracing.exportIntervalSeconds"),
    ]

    /// The settings whose value is a map (a JSON object in the file; `name=value` entries, comma-separated,
    /// in the environment and on the command line: a map's keys, SAML attribute names, hold dots, which
    /// swift-configuration reads as nesting).
    static let maps: Set<String> = ["userMetadataMapping", "mvpdAuthenticationTTLSeconds"]

    static let secrets = Set(all.filter(\.isSecret).map(\.key))

    /// The environment variable of a key, as swift-configuration's environment provider spells it.
    static func environmentName(_ key: String) -> String {
        spelled(environmentScope + "." + key, separator: "_").uppercased()
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
