import Foundation
import Logging
import SAML

/// What the Token Exchange service needs, read from a JSON file and the environment.
///
/// ```json
/// {
///   "serviceProvider": "REF30",
///   "mvpdConfiguration": "exchange/mvpd-configuration.json",
///   "trust": "exchange/trust.json",
///   "spEntityID": "https://saml.sp.auth.adobe.com",
///   "store": "memory",
///   "host": "127.0.0.1", "port": 8080
/// }
/// ```
///
/// Paths are relative to the file. Every other member has the default documented below. The
/// environment overrides the file: `SAML_SERVICE_HOST`, `SAML_SERVICE_PORT`, `SAML_SERVICE_STORE` (for
/// example a `postgres://` URL with its password, which then stays out of the file) and
/// `SAML_SERVICE_LOG_LEVEL`.
public struct ServiceConfiguration: Sendable {
    /// The address to listen on. Default `127.0.0.1`: TLS is a proxy's job, so the service listens
    /// behind one (README).
    public var host = "127.0.0.1"
    /// Default 8080; 0 picks a free port (tests).
    public var port = 8080
    /// The service provider (requestor) id this service answers for: `{serviceProvider}` in the paths,
    /// `requestor` in REST API v1.
    public var serviceProvider: String
    /// The MVPD configuration (the v2 JSON or v1 XML/JSON ``AppleSSO/MVPDConfiguration/decode(_:)`` reads).
    public var mvpdConfigurationPath: String
    /// The trust file (``AppleSSO/TrustFile``): which identity provider each MVPD trusts.
    public var trustPath: String
    /// The SP's entity ID: the Issuer of the SAML requests this service issues, and the Audience it
    /// requires. Default `https://saml.sp.auth.adobe.com`.
    public var spEntityID = "https://saml.sp.auth.adobe.com"
    /// The Destination a response must name (the public URL of the Token Exchange endpoint), or nil to
    /// not check it (the MVPD's answer reaches the service through Apple's framework and the app).
    public var destination: String?
    /// `memory` (default: this process only) or `postgres://user[:password]@host[:port]/database`.
    public var store = "memory"
    /// The deadline of one store operation; past it the request fails closed (503). Default 2 s.
    public var storeTimeout: Duration = .seconds(2)
    /// Connections in the PostgreSQL pool. Default 10.
    public var storeConnections = 10
    /// How long a SAML request issued by `sessions/sso` can be answered. Default 300 s.
    public var requestLifetime: Duration = .seconds(300)
    /// The largest request body accepted (413 above it). Default 256 KiB: a SAMLResponse is a few KiB;
    /// the library's own decode limit stays the last line.
    public var maximumBodyBytes = 256 * 1024
    /// The largest request header block accepted. Default 16 KiB.
    public var maximumHeaderBytes = 16 * 1024
    /// SAML attribute name → user-metadata key (``AppleSSO/UserMetadataMapping``).
    public var userMetadataMapping: [String: String] = [:]
    /// MVPD ids listed, in order, as `featuredAccountProviderIdentifiers` by the configuration endpoint.
    public var featuredMVPDs: [String] = []
    /// When not empty, every `/api/` request must carry `Authorization: Bearer <one of these>` (401
    /// otherwise). Empty (default): the service trusts the gateway in front of it to authenticate apps.
    public var bearerTokens: [String] = []
    /// Accept responses that answer no request of this service (IdP-initiated). Default false.
    public var allowUnsolicited = false
    /// The SP's key and certificate (PEM paths) to sign the SAML requests with; unsigned when absent.
    public var requestSigningKeyPath: String?
    public var requestSigningCertificatePath: String?
    /// Default `info`.
    public var logLevel: Logger.Level = .info

    public init(serviceProvider: String, mvpdConfigurationPath: String, trustPath: String) {
        self.serviceProvider = serviceProvider
        self.mvpdConfigurationPath = mvpdConfigurationPath
        self.trustPath = trustPath
    }

    /// Reads the JSON file at `path`, then applies the environment.
    public static func load(contentsOf path: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws
        -> ServiceConfiguration
    {
        let base = URL(fileURLWithPath: path).deletingLastPathComponent()
        guard let data = FileManager.default.contents(atPath: path),
            let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
        else {
            throw SAMLError(.configurationInvalid, "expected a JSON object in the service configuration \(quoted(path)), found none")
        }
        func string(_ key: String) throws -> String? {
            guard let value = object[key] else { return nil }
            guard let text = value as? String else {
                throw SAMLError(.configurationInvalid, "expected a string for \(quoted(key)) in \(quoted(path))")
            }
            return text
        }
        func number(_ key: String) throws -> Double? {
            guard let value = object[key] else { return nil }
            guard let number = value as? NSNumber, !(value is Bool) else {
                throw SAMLError(.configurationInvalid, "expected a number for \(quoted(key)) in \(quoted(path))")
            }
            return number.doubleValue
        }
        func relative(_ file: String) -> String {
            file.hasPrefix("/") ? file : base.appendingPathComponent(file).path
        }
        guard let serviceProvider = try string("serviceProvider"), let mvpds = try string("mvpdConfiguration"),
            let trust = try string("trust")
        else {
            throw SAMLError(
                .configurationInvalid, "expected \"serviceProvider\", \"mvpdConfiguration\" and \"trust\" in \(quoted(path))")
        }
        var configuration = ServiceConfiguration(
            serviceProvider: serviceProvider, mvpdConfigurationPath: relative(mvpds), trustPath: relative(trust))
        if let value = try string("host") { configuration.host = value }
        if let value = try number("port") { configuration.port = Int(value) }
        if let value = try string("spEntityID") { configuration.spEntityID = value }
        if let value = try string("destination") { configuration.destination = value }
        if let value = try string("store") { configuration.store = value }
        if let value = try number("storeTimeoutSeconds") { configuration.storeTimeout = .milliseconds(Int64(value * 1000)) }
        if let value = try number("storeConnections") { configuration.storeConnections = Int(value) }
        if let value = try number("requestLifetimeSeconds") { configuration.requestLifetime = .seconds(Int64(value)) }
        if let value = try number("maximumBodyBytes") { configuration.maximumBodyBytes = Int(value) }
        if let value = try number("maximumHeaderBytes") { configuration.maximumHeaderBytes = Int(value) }
        if let value = object["userMetadataMapping"] {
            guard let mapping = value as? [String: String] else {
                throw SAMLError(.configurationInvalid, "expected an object of strings for \"userMetadataMapping\"")
            }
            configuration.userMetadataMapping = mapping
        }
        for (key, keyPath) in [("featuredMVPDs", \ServiceConfiguration.featuredMVPDs), ("bearerTokens", \.bearerTokens)] {
            guard let value = object[key] else { continue }
            guard let list = value as? [String] else { throw SAMLError(.configurationInvalid, "expected a list of strings for \"\(key)\"") }
            configuration[keyPath: keyPath] = list
        }
        if let value = object["allowUnsolicited"] {
            guard let flag = value as? Bool else {
                throw SAMLError(.configurationInvalid, "expected true or false for \"allowUnsolicited\"")
            }
            configuration.allowUnsolicited = flag
        }
        configuration.requestSigningKeyPath = try string("requestSigningKey").map(relative)
        configuration.requestSigningCertificatePath = try string("requestSigningCertificate").map(relative)
        if let value = try string("logLevel") { configuration.logLevel = try level(value) }
        try configuration.apply(environment: environment)
        return configuration
    }

    /// `SAML_SERVICE_HOST`, `SAML_SERVICE_PORT`, `SAML_SERVICE_STORE`, `SAML_SERVICE_LOG_LEVEL`.
    public mutating func apply(environment: [String: String]) throws {
        if let value = environment["SAML_SERVICE_HOST"] { host = value }
        if let value = environment["SAML_SERVICE_PORT"] {
            guard let number = Int(value), (0...65535).contains(number) else {
                throw SAMLError(.configurationInvalid, "expected a port number in SAML_SERVICE_PORT, found \(quoted(value))")
            }
            port = number
        }
        if let value = environment["SAML_SERVICE_STORE"] { store = value }
        if let value = environment["SAML_SERVICE_LOG_LEVEL"] { logLevel = try Self.level(value) }
    }

    private static func level(_ text: String) throws -> Logger.Level {
        guard let level = Logger.Level(rawValue: text) else {
            throw SAMLError(
                .configurationInvalid, "expected a log level (trace, debug, info, notice, warning, error, critical), found \(quoted(text))")
        }
        return level
    }
}

private func quoted(_ text: String) -> String { "\"" + text + "\"" }
