import AppleSSO
import Configuration
import Foundation
import SAML

/// The service's settings read from swift-configuration's `ConfigReader`, from whichever provider has each
/// first: each read line here is a setting (``SettingsReader`` records it), so every key is read
/// unconditionally, before anything else decides.
extension ServiceConfiguration {
    /// Reads every setting; a value of the wrong type is left to the reader's reporter, which
    /// ``load(contentsOf:arguments:environment:)`` turns into an error.
    init(reading settings: SettingsReader) throws {
        // Every key is read before any is judged missing: ``ServiceSettings/known`` reads nothing this way.
        let serviceProvider = settings.string("serviceProvider")
        let mvpdConfiguration = settings.path("mvpdConfiguration")
        let trust = settings.path("trust")
        self.init(serviceProvider: serviceProvider ?? "", mvpdConfigurationPath: mvpdConfiguration ?? "", trustPath: trust ?? "")
        if let value = settings.bool("allowDevelopmentKeys", inFile: false) { allowDevelopmentKeys = value }
        if let value = settings.bool("allowReadableSecretFiles") { allowReadableSecretFiles = value }
        if let value = settings.bool("allowExpiredCertificates") { allowExpiredCertificates = value }
        if let value = settings.bool("allowUnauthenticatedAPI") { allowUnauthenticatedAPI = value }
        try readListener(settings)
        try readStore(settings)
        try readVerification(settings)
        try readAnswers(settings)
        try readDecisions(settings)
        try readCallers(settings)
        try readLimits(settings)
        try readLogs(settings)
        tracing = try Self.tracing(settings.scoped(to: "tracing"), file: settings.file, environment: settings.environment)
        for (key, value) in [("mvpdConfiguration", mvpdConfiguration), ("trust", trust), ("serviceProvider", serviceProvider)]
        where value == nil {
            throw SAMLError(.configurationInvalid, "expected \(quoted(key)) in \(quoted(settings.file.path)), found none")
        }
    }

    /// The public listener.
    private mutating func readListener(_ settings: SettingsReader) throws {
        if let value = settings.string("host") { host = value }
        if let value = try settings.int("port", in: 0...65535) { port = value }
    }

    /// The state store.
    private mutating func readStore(_ settings: SettingsReader) throws {
        if let value = settings.string("store") { store = value }
        if let value = settings.bool("allowPlaintextStore") { allowPlaintextStore = value }
        if let value = try secretText(settings, "storePasswordFile") {
            guard !value.isEmpty else {
                throw SAMLError(
                    .configurationInvalid, "expected a password in storePasswordFile, found an empty file (a mount that did not happen?)")
            }
            storePassword = value
        }
        if let value = settings.string("storePassword", secret: true) { storePassword = value }
        if let value = try settings.seconds("storeTimeoutSeconds") { storeTimeout = value }
        if let value = try settings.seconds("storeStartupTimeoutSeconds") { storeStartupTimeout = value }
        if let value = try settings.int("storeConnections", in: 1...Int.max) { storeConnections = value }
        if let value = try settings.seconds("storeBatchWindowMilliseconds", unit: .milliseconds(1), in: 0...50) { storeBatchWindow = value }
        if let value = try settings.int("profileLookupsPerSecond", in: 1...Int.max) { profileLookupsPerSecond = value }
        if let value = try settings.int("profileLookupConcurrency", in: 1...Int.max) { profileLookupConcurrency = value }
        if let value = try settings.int("profileDirectoryCapacity", in: 0...Int.max) { profileDirectoryCapacity = value }
        if let value = try settings.int("memoryStoreCapacity", in: 1...Int.max) { memoryStoreCapacity = value }
        if let value = try settings.int("memoryProfileCapacity", in: 1...Int.max) { memoryProfileCapacity = value }
    }

    /// The requests the service issues and the responses it verifies.
    private mutating func readVerification(_ settings: SettingsReader) throws {
        if let value = settings.string("spEntityID") { spEntityID = value }
        destination = settings.string("destination")
        if let value = try secret(settings, "requestKeysFile") {
            requestKeys = try Self.parseRequestKeys(value)
            requestKeysFilePath = settings.path("requestKeysFile")
        }
        if let value = settings.strings("requestKeys", secret: true) {
            requestKeys = try Self.parseRequestKeys(value)
            requestKeysFilePath = nil
        }
        if let value = try settings.seconds("requestLifetimeSeconds") { requestLifetime = value }
        if let value = try settings.seconds("maximumAgeSeconds") { maximumAge = value }
        if let value = try settings.seconds("clockSkewSeconds", in: 0...3600) { clockSkew = value }
        if let value = settings.bool("allowUnsolicited") { allowUnsolicited = value }
        requestSigningKeyPath = settings.path("requestSigningKey")
        signaturesPerSecond = try settings.int("signaturesPerSecond", in: 1...Int.max)
        requestSigningCertificatePath = settings.path("requestSigningCertificate")
        if let value = settings.strings("assertionConsumerServiceURLs") { assertionConsumerServiceURLs = value }
        encryptionCertificatePath = settings.path("encryptionCertificate")
    }

    /// What the endpoints answer.
    private mutating func readAnswers(_ settings: SettingsReader) throws {
        if let value = try settings.map("userMetadataMapping") { userMetadataMapping = value }
        if let value = settings.strings("featuredMVPDs") { featuredMVPDs = value }
        if let value = settings.string("authenticationURL") { authenticationURL = value }
        if let value = try settings.seconds("authenticationTTLSeconds") { authenticationTTL = value }
        if let value = try settings.map("mvpdAuthenticationTTLSeconds") {
            mvpdAuthenticationTTLs = try value.mapValues { text in
                guard let seconds = Double(text), seconds >= 0 else {
                    throw SAMLError(
                        .configurationInvalid, "expected seconds as the values of mvpdAuthenticationTTLSeconds, found another value")
                }
                return .milliseconds(Int64(seconds * 1000))
            }
        }
        requestorName = settings.string("requestorName")
        if let value = settings.strings("domains") { domains = value }
    }

    /// The authorization decisions and their media tokens.
    private mutating func readDecisions(_ settings: SettingsReader) throws {
        if let value = try secretText(settings, "mediaTokenKeysFile") {
            mediaTokenKeysPEM = value
            mediaTokenKeysFilePath = settings.path("mediaTokenKeysFile")
        }
        if let value = try settings.seconds("mediaTokenLifetimeSeconds", in: 1...3600) { mediaTokenLifetime = value }
        if let value = try settings.int("maximumPreauthorizeResources", in: 1...100) { maximumPreauthorizeResources = value }
        if let value = try settings.seconds("authorizationTimeoutMilliseconds", unit: .milliseconds(1), in: 1...30_000) {
            authorizationTimeout = value
        }
    }

    /// Who may call: the bearer and admin tokens.
    private mutating func readCallers(_ settings: SettingsReader) throws {
        let readable = allowReadableSecretFiles
        bearerTokensFilePath = settings.path("bearerTokensFile")
        adminTokensFilePath = settings.path("adminTokensFile")
        if let file = settings.path("bearerTokensFile") {
            // An empty file is refused (it must not turn authentication off), unless the operator said that
            // the API is meant to go without.
            bearerTokens = try Self.secret(
                file, setting: "bearerTokensFile", allowingReadable: readable, allowingEmpty: allowUnauthenticatedAPI)
        }
        if let value = settings.strings("bearerTokens", secret: true) {
            guard !value.isEmpty || allowUnauthenticatedAPI else {
                throw SAMLError(
                    .configurationInvalid, "expected at least one token in bearerTokens, found none: remove the setting to go without")
            }
            bearerTokens = value
            bearerTokensFilePath = nil
        }
        if let value = try secret(settings, "adminTokensFile") { adminTokens = value }
        if let value = settings.strings("adminTokens", secret: true) {
            guard !value.isEmpty else {
                throw SAMLError(
                    .configurationInvalid, "expected at least one token in adminTokens, found none: remove the setting to go without")
            }
            adminTokens = value
            adminTokensFilePath = nil
        }
    }

    /// What a caller may cost: connections, sizes, deadlines, admission; the admin listener; shutdown.
    private mutating func readLimits(_ settings: SettingsReader) throws {
        if let value = try settings.int("maximumConnections", in: 1...Int.max) { maximumConnections = value }
        if let value = try settings.int("maximumBodyBytes", in: 1...Int.max) { maximumBodyBytes = value }
        if let value = try settings.int("maximumHeaderBytes", in: 1...Int.max) { maximumHeaderBytes = value }
        if let value = try settings.seconds("headerTimeoutSeconds") { headerTimeout = value }
        if let value = try settings.seconds("requestTimeoutSeconds") { requestTimeout = value }
        if let value = try settings.seconds("idleTimeoutSeconds") { idleTimeout = value }
        if let value = try settings.int("maximumConcurrentVerifications", in: 1...Int.max) { maximumConcurrentVerifications = value }
        if let value = try settings.int("verificationQueue", in: 0...Int.max) { verificationQueue = value }
        adminPort = try settings.int("adminPort", in: 0...65535)
        if let value = settings.string("adminHost") { adminHost = value }
        if let value = try settings.seconds("shutdownTimeoutSeconds") { shutdownTimeout = value }
    }

    /// The logs.
    private mutating func readLogs(_ settings: SettingsReader) throws {
        if let value = settings.string("logLevel") { logLevel = try Self.level(value) }
        if let value = settings.string("logFormat") {
            guard let format = LogFormat(rawValue: value) else {
                throw SAMLError(.configurationInvalid, "expected logFormat \"text\" or \"json\", found \(quoted(value))")
            }
            logFormat = format
        }
    }

    /// A secret file's text (`storePasswordFile`), with the checks of ``secretText(_:setting:allowingReadable:)``.
    private func secretText(_ settings: SettingsReader, _ key: String) throws -> String? {
        try settings.path(key).map { try Self.secretText($0, setting: key, allowingReadable: allowReadableSecretFiles) }
    }

    /// A secret file's entries (`bearerTokensFile`, `requestKeysFile`), with the checks of
    /// ``secret(_:setting:allowingReadable:allowingEmpty:)``.
    private func secret(_ settings: SettingsReader, _ key: String) throws -> [String]? {
        try settings.path(key).map { try Self.secret($0, setting: key, allowingReadable: allowReadableSecretFiles) }
    }

    /// On when the file has a `tracing` object, any `tracing.*` setting is set, or OpenTelemetry's standard
    /// endpoint variables are; off, whatever else is set, with `OTEL_SDK_DISABLED=true` or
    /// `OTEL_TRACES_EXPORTER=none`.
    private static func tracing(_ settings: SettingsReader, file: ConfigurationFile, environment: [String: String]) throws -> Tracing? {
        // Read first, whatever follows: what is read is what the sources may hold.
        let endpoint = settings.string("endpoint")
        let encoding = settings.string("protocol")
        let sampleRatio = try settings.double("sampleRatio", in: 0...1)
        let exportInterval = try settings.seconds("exportIntervalSeconds", in: 0.001...3600)
        if environment["OTEL_SDK_DISABLED"]?.lowercased() == "true" || environment["OTEL_TRACES_EXPORTER"]?.lowercased() == "none" {
            return nil
        }
        let standardEndpoint = environment["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] != nil || environment["OTEL_EXPORTER_OTLP_ENDPOINT"] != nil
        guard
            file.hasTracing || endpoint != nil || encoding != nil || sampleRatio != nil || exportInterval != nil
                || standardEndpoint
        else { return nil }
        var tracing = Tracing(endpoint: try endpoint.map(Tracing.checkedEndpoint))
        if let encoding {
            guard let value = Tracing.Encoding(rawValue: encoding) else {
                throw SAMLError(
                    .configurationInvalid, "expected tracing.protocol \"http/protobuf\" or \"http/json\", found \(quoted(encoding))")
            }
            tracing.encoding = value
        }
        if let sampleRatio { tracing.sampleRatio = sampleRatio }
        if let exportInterval { tracing.exportInterval = exportInterval }
        return tracing
    }
}
