import AppleSSO
import Foundation
import Logging
import SAML

/// The configuration file: JSON, every member known (an unknown one refused), paths relative to the file.
extension ServiceConfiguration {
    /// Reads the JSON file at `path`, then applies the environment.
    public static func load(contentsOf path: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws
        -> ServiceConfiguration
    {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw SAMLError(.configurationInvalid, "expected a readable service configuration at \(quoted(path)), found none")
        }
        let file: File
        do {
            file = try JSONDecoder().decode(File.self, from: data)
        } catch let error as SAMLError {
            throw error
        } catch let DecodingError.typeMismatch(type, context), let DecodingError.valueNotFound(type, context) {
            throw SAMLError(
                .configurationInvalid, "expected \(type) for \(quoted(Self.keyPath(context))) in \(quoted(path)), found another value")
        } catch let DecodingError.keyNotFound(key, _) {
            throw SAMLError(.configurationInvalid, "expected \(quoted(key.stringValue)) in \(quoted(path)), found none")
        } catch {
            throw SAMLError(
                .configurationInvalid, "expected a JSON object in the service configuration \(quoted(path)), found another form")
        }
        var configuration = try file.configuration(relativeTo: URL(fileURLWithPath: path).deletingLastPathComponent())
        try configuration.apply(environment: environment)
        return configuration
    }

    private static func keyPath(_ context: DecodingError.Context) -> String {
        context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
    }

    /// The configuration file as JSON: every member optional but the three paths, an unknown member
    /// refused (a misspelt security setting must not be silently ignored).
    private struct File: Decodable {
        var serviceProvider: String
        var mvpdConfiguration: String
        var trust: String
        var host: String?
        var port: Int?
        var spEntityID: String?
        var destination: String?
        var store: String?
        var storePasswordFile: String?
        var bearerTokensFile: String?
        var adminTokensFile: String?
        var requestKeysFile: String?
        var maximumConnections: Int?
        var memoryStoreCapacity: Int?
        var memoryProfileCapacity: Int?
        var headerTimeoutSeconds: Double?
        var requestTimeoutSeconds: Double?
        var idleTimeoutSeconds: Double?
        var maximumConcurrentVerifications: Int?
        var verificationQueue: Int?
        var adminPort: Int?
        var adminHost: String?
        var shutdownTimeoutSeconds: Double?
        var storeTimeoutSeconds: Double?
        var storeStartupTimeoutSeconds: Double?
        var storeConnections: Int?
        var storeBatchWindowMilliseconds: Double?
        var profileLookupsPerSecond: Int?
        var profileLookupConcurrency: Int?
        var requestLifetimeSeconds: Double?
        var maximumAgeSeconds: Double?
        var clockSkewSeconds: Double?
        var maximumBodyBytes: Int?
        var maximumHeaderBytes: Int?
        var userMetadataMapping: [String: String]?
        var featuredMVPDs: [String]?
        var bearerTokens: [String]?
        var allowUnsolicited: Bool?
        var requestSigningKey: String?
        var requestSigningCertificate: String?
        var assertionConsumerServiceURLs: [String]?
        var encryptionCertificate: String?
        var authenticationURL: String?
        var authenticationTTLSeconds: Double?
        var mvpdAuthenticationTTLSeconds: [String: Double]?
        var requestorName: String?
        var domains: [String]?
        var logLevel: String?
        var tracing: TracingFile?

        private enum CodingKeys: String, CodingKey, CaseIterable {
            case serviceProvider, mvpdConfiguration, trust, host, port, spEntityID, destination, store, storePasswordFile
            case bearerTokensFile, adminTokensFile, requestKeysFile, maximumConnections, headerTimeoutSeconds, requestTimeoutSeconds
            case memoryStoreCapacity, memoryProfileCapacity
            case idleTimeoutSeconds, maximumConcurrentVerifications, verificationQueue, adminPort, adminHost
            case shutdownTimeoutSeconds, storeTimeoutSeconds, storeStartupTimeoutSeconds, storeConnections, storeBatchWindowMilliseconds
            case profileLookupsPerSecond, profileLookupConcurrency
            case maximumAgeSeconds, clockSkewSeconds
            case requestLifetimeSeconds, maximumBodyBytes, maximumHeaderBytes, userMetadataMapping, featuredMVPDs
            case bearerTokens, allowUnsolicited, requestSigningKey, requestSigningCertificate, logLevel
            case assertionConsumerServiceURLs, encryptionCertificate, authenticationURL, authenticationTTLSeconds
            case mvpdAuthenticationTTLSeconds, requestorName, domains, tracing
        }

        init(from decoder: any Decoder) throws {
            try refuseUnknownMembers(decoder, known: CodingKeys.allCases.map(\.rawValue), in: "the service configuration")
            let container = try decoder.container(keyedBy: CodingKeys.self)
            serviceProvider = try container.decode(String.self, forKey: .serviceProvider)
            mvpdConfiguration = try container.decode(String.self, forKey: .mvpdConfiguration)
            trust = try container.decode(String.self, forKey: .trust)
            host = try container.decodeIfPresent(String.self, forKey: .host)
            port = try container.decodeIfPresent(Int.self, forKey: .port)
            spEntityID = try container.decodeIfPresent(String.self, forKey: .spEntityID)
            destination = try container.decodeIfPresent(String.self, forKey: .destination)
            store = try container.decodeIfPresent(String.self, forKey: .store)
            storePasswordFile = try container.decodeIfPresent(String.self, forKey: .storePasswordFile)
            bearerTokensFile = try container.decodeIfPresent(String.self, forKey: .bearerTokensFile)
            adminTokensFile = try container.decodeIfPresent(String.self, forKey: .adminTokensFile)
            requestKeysFile = try container.decodeIfPresent(String.self, forKey: .requestKeysFile)
            maximumConnections = try container.decodeIfPresent(Int.self, forKey: .maximumConnections)
            memoryStoreCapacity = try container.decodeIfPresent(Int.self, forKey: .memoryStoreCapacity)
            memoryProfileCapacity = try container.decodeIfPresent(Int.self, forKey: .memoryProfileCapacity)
            headerTimeoutSeconds = try container.decodeIfPresent(Double.self, forKey: .headerTimeoutSeconds)
            requestTimeoutSeconds = try container.decodeIfPresent(Double.self, forKey: .requestTimeoutSeconds)
            idleTimeoutSeconds = try container.decodeIfPresent(Double.self, forKey: .idleTimeoutSeconds)
            maximumConcurrentVerifications = try container.decodeIfPresent(Int.self, forKey: .maximumConcurrentVerifications)
            verificationQueue = try container.decodeIfPresent(Int.self, forKey: .verificationQueue)
            adminPort = try container.decodeIfPresent(Int.self, forKey: .adminPort)
            adminHost = try container.decodeIfPresent(String.self, forKey: .adminHost)
            shutdownTimeoutSeconds = try container.decodeIfPresent(Double.self, forKey: .shutdownTimeoutSeconds)
            storeTimeoutSeconds = try container.decodeIfPresent(Double.self, forKey: .storeTimeoutSeconds)
            storeStartupTimeoutSeconds = try container.decodeIfPresent(Double.self, forKey: .storeStartupTimeoutSeconds)
            storeConnections = try container.decodeIfPresent(Int.self, forKey: .storeConnections)
            storeBatchWindowMilliseconds = try container.decodeIfPresent(Double.self, forKey: .storeBatchWindowMilliseconds)
            profileLookupsPerSecond = try container.decodeIfPresent(Int.self, forKey: .profileLookupsPerSecond)
            profileLookupConcurrency = try container.decodeIfPresent(Int.self, forKey: .profileLookupConcurrency)
            requestLifetimeSeconds = try container.decodeIfPresent(Double.self, forKey: .requestLifetimeSeconds)
            maximumAgeSeconds = try container.decodeIfPresent(Double.self, forKey: .maximumAgeSeconds)
            clockSkewSeconds = try container.decodeIfPresent(Double.self, forKey: .clockSkewSeconds)
            maximumBodyBytes = try container.decodeIfPresent(Int.self, forKey: .maximumBodyBytes)
            maximumHeaderBytes = try container.decodeIfPresent(Int.self, forKey: .maximumHeaderBytes)
            userMetadataMapping = try container.decodeIfPresent([String: String].self, forKey: .userMetadataMapping)
            featuredMVPDs = try container.decodeIfPresent([String].self, forKey: .featuredMVPDs)
            bearerTokens = try container.decodeIfPresent([String].self, forKey: .bearerTokens)
            allowUnsolicited = try container.decodeIfPresent(Bool.self, forKey: .allowUnsolicited)
            requestSigningKey = try container.decodeIfPresent(String.self, forKey: .requestSigningKey)
            requestSigningCertificate = try container.decodeIfPresent(String.self, forKey: .requestSigningCertificate)
            logLevel = try container.decodeIfPresent(String.self, forKey: .logLevel)
            assertionConsumerServiceURLs = try container.decodeIfPresent([String].self, forKey: .assertionConsumerServiceURLs)
            encryptionCertificate = try container.decodeIfPresent(String.self, forKey: .encryptionCertificate)
            authenticationURL = try container.decodeIfPresent(String.self, forKey: .authenticationURL)
            authenticationTTLSeconds = try container.decodeIfPresent(Double.self, forKey: .authenticationTTLSeconds)
            mvpdAuthenticationTTLSeconds = try container.decodeIfPresent([String: Double].self, forKey: .mvpdAuthenticationTTLSeconds)
            requestorName = try container.decodeIfPresent(String.self, forKey: .requestorName)
            domains = try container.decodeIfPresent([String].self, forKey: .domains)
            tracing = try container.decodeIfPresent(TracingFile.self, forKey: .tracing)
        }

        /// The configuration this file describes, its paths relative to `base`.
        func configuration(relativeTo base: URL) throws -> ServiceConfiguration {
            func relative(_ file: String) -> String {
                file.hasPrefix("/") ? file : base.appendingPathComponent(file).path
            }
            func duration(_ seconds: Double?) -> Duration? {
                seconds.map { .milliseconds(Int64($0 * 1000)) }
            }
            var configuration = ServiceConfiguration(
                serviceProvider: serviceProvider, mvpdConfigurationPath: relative(mvpdConfiguration), trustPath: relative(trust))
            if let host { configuration.host = host }
            if let port { configuration.port = port }
            if let spEntityID { configuration.spEntityID = spEntityID }
            configuration.destination = destination
            if let store { configuration.store = store }
            if let storePasswordFile { configuration.storePassword = try secretText(relative(storePasswordFile)) }
            if let bearerTokensFile { configuration.bearerTokens = try secret(relative(bearerTokensFile)) }
            if let bearerTokens { configuration.bearerTokens = bearerTokens }
            if let adminTokensFile { configuration.adminTokens = try secret(relative(adminTokensFile)) }
            if let requestKeysFile { configuration.requestKeys = try parseRequestKeys(try secret(relative(requestKeysFile))) }
            if let maximumConnections { configuration.maximumConnections = maximumConnections }
            for (name, value) in [("memoryStoreCapacity", memoryStoreCapacity), ("memoryProfileCapacity", memoryProfileCapacity)] {
                if let value, value < 1 {
                    throw SAMLError(.configurationInvalid, "expected \(name) of at least 1, found \(value)")
                }
            }
            if let memoryStoreCapacity { configuration.memoryStoreCapacity = memoryStoreCapacity }
            if let memoryProfileCapacity { configuration.memoryProfileCapacity = memoryProfileCapacity }
            if let value = duration(headerTimeoutSeconds) { configuration.headerTimeout = value }
            if let value = duration(requestTimeoutSeconds) { configuration.requestTimeout = value }
            if let value = duration(idleTimeoutSeconds) { configuration.idleTimeout = value }
            if let maximumConcurrentVerifications { configuration.maximumConcurrentVerifications = maximumConcurrentVerifications }
            if let verificationQueue { configuration.verificationQueue = verificationQueue }
            configuration.adminPort = adminPort
            if let adminHost { configuration.adminHost = adminHost }
            if let value = duration(shutdownTimeoutSeconds) { configuration.shutdownTimeout = value }
            if let value = duration(storeTimeoutSeconds) { configuration.storeTimeout = value }
            if let value = duration(storeStartupTimeoutSeconds) { configuration.storeStartupTimeout = value }
            if let storeConnections { configuration.storeConnections = storeConnections }
            if let storeBatchWindowMilliseconds {
                guard (0...50).contains(storeBatchWindowMilliseconds) else {
                    throw SAMLError(.configurationInvalid, "expected storeBatchWindowMilliseconds from 0 to 50, found another value")
                }
                configuration.storeBatchWindow = .microseconds(Int64(storeBatchWindowMilliseconds * 1000))
            }
            for (name, value) in [
                ("profileLookupsPerSecond", profileLookupsPerSecond), ("profileLookupConcurrency", profileLookupConcurrency),
            ] {
                if let value, value < 1 {
                    throw SAMLError(.configurationInvalid, "expected \(name) of at least 1, found \(value)")
                }
            }
            if let profileLookupsPerSecond { configuration.profileLookupsPerSecond = profileLookupsPerSecond }
            if let profileLookupConcurrency { configuration.profileLookupConcurrency = profileLookupConcurrency }
            if let value = duration(requestLifetimeSeconds) { configuration.requestLifetime = value }
            if let value = duration(maximumAgeSeconds) { configuration.maximumAge = value }
            if let clockSkewSeconds {
                guard clockSkewSeconds >= 0, clockSkewSeconds <= 3600 else {
                    throw SAMLError(.configurationInvalid, "expected clockSkewSeconds from 0 to 3600, found \(clockSkewSeconds)")
                }
                configuration.clockSkew = .milliseconds(Int64(clockSkewSeconds * 1000))
            }
            if let maximumBodyBytes { configuration.maximumBodyBytes = maximumBodyBytes }
            if let maximumHeaderBytes { configuration.maximumHeaderBytes = maximumHeaderBytes }
            if let userMetadataMapping { configuration.userMetadataMapping = userMetadataMapping }
            if let featuredMVPDs { configuration.featuredMVPDs = featuredMVPDs }
            if let allowUnsolicited { configuration.allowUnsolicited = allowUnsolicited }
            configuration.requestSigningKeyPath = requestSigningKey.map(relative)
            configuration.requestSigningCertificatePath = requestSigningCertificate.map(relative)
            if let assertionConsumerServiceURLs { configuration.assertionConsumerServiceURLs = assertionConsumerServiceURLs }
            configuration.encryptionCertificatePath = encryptionCertificate.map(relative)
            if let authenticationURL { configuration.authenticationURL = authenticationURL }
            if let value = duration(authenticationTTLSeconds) { configuration.authenticationTTL = value }
            if let mvpdAuthenticationTTLSeconds {
                configuration.mvpdAuthenticationTTLs = mvpdAuthenticationTTLSeconds.compactMapValues(duration)
            }
            configuration.requestorName = requestorName
            if let domains { configuration.domains = domains }
            if let logLevel { configuration.logLevel = try level(logLevel) }
            configuration.tracing = try tracing?.settings()
            return configuration
        }
    }

    /// The file's `tracing` object: `endpoint`, `protocol`, `sampleRatio`, `exportIntervalSeconds`.
    private struct TracingFile: Decodable {
        var endpoint: String?
        var encoding: String?
        var sampleRatio: Double?
        var exportIntervalSeconds: Double?

        private enum CodingKeys: String, CodingKey, CaseIterable {
            case endpoint, encoding = "protocol", sampleRatio, exportIntervalSeconds
        }

        init(from decoder: any Decoder) throws {
            try refuseUnknownMembers(decoder, known: CodingKeys.allCases.map(\.rawValue), in: "tracing")
            let container = try decoder.container(keyedBy: CodingKeys.self)
            endpoint = try container.decodeIfPresent(String.self, forKey: .endpoint)
            encoding = try container.decodeIfPresent(String.self, forKey: .encoding)
            sampleRatio = try container.decodeIfPresent(Double.self, forKey: .sampleRatio)
            exportIntervalSeconds = try container.decodeIfPresent(Double.self, forKey: .exportIntervalSeconds)
        }

        func settings() throws -> Tracing {
            var settings = Tracing(endpoint: try endpoint.map(Tracing.checkedEndpoint))
            if let encoding {
                guard let value = Tracing.Encoding(rawValue: encoding) else {
                    throw SAMLError(
                        .configurationInvalid, "expected tracing.protocol \"http/protobuf\" or \"http/json\", found \(quoted(encoding))")
                }
                settings.encoding = value
            }
            if let sampleRatio {
                guard (0...1).contains(sampleRatio) else {
                    throw SAMLError(.configurationInvalid, "expected tracing.sampleRatio from 0 to 1, found \(sampleRatio)")
                }
                settings.sampleRatio = sampleRatio
            }
            if let exportIntervalSeconds {
                guard exportIntervalSeconds > 0, exportIntervalSeconds <= 3600 else {
                    throw SAMLError(
                        .configurationInvalid,
                        "expected tracing.exportIntervalSeconds above 0 and at most 3600, found \(exportIntervalSeconds)"
                    )
                }
                settings.exportInterval = .milliseconds(Int64(exportIntervalSeconds * 1000))
            }
            return settings
        }
    }

    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// A misspelt setting must not be silently ignored: a member not in `known` is refused.
    private static func refuseUnknownMembers(_ decoder: any Decoder, known: [String], in object: String) throws {
        let known = Set(known)
        if let unknown = try decoder.container(keyedBy: AnyKey.self).allKeys.map(\.stringValue).sorted().first(where: {
            !known.contains($0)
        }) {
            throw SAMLError(.configurationInvalid, "expected only documented members in \(object), found \(quoted(unknown))")
        }
    }
}
