import Configuration
import Foundation
import SAML
import SAMLTestSupport
import Synchronization
import Testing

@testable import SAMLService

@Suite("Service settings: one list of keys, three providers")
struct ServiceSettingsTests {
    static let bundled = "\(Service.vectors)/exchange/service.json"

    /// Every key the configuration reads, as swift-configuration reports it.
    final class ReadKeys: AccessReporter {
        let keys = Mutex<Set<String>>([])
        func report(_ event: AccessEvent) {
            _ = keys.withLock { $0.insert(event.metadata.key.components.joined(separator: ".")) }
        }
    }

    /// The keys read when the bundled configuration loads: the settings.
    static func settingsRead(environment: [String: String] = [:], arguments: [String] = []) async throws -> Set<String> {
        let read = ReadKeys()
        _ = try await ServiceConfiguration.load(contentsOf: bundled, arguments: arguments, environment: environment, accessReporter: read)
        return read.keys.withLock { $0 }
    }

    @Test("the settings are what is read, whatever the sources hold: no read depends on another setting")
    func everyKeyRead() async throws {
        let plain = try await Self.settingsRead()
        #expect(plain.count > 50 && plain.contains("tracing.endpoint") && plain.contains("bearerTokens"))
        // What the judge knows (read from no source) is what a real load reads.
        #expect(Set(ServiceSettings.known.keys) == plain)
        #expect(
            ServiceSettings.known.values.filter(\.isSecret).map(\.key).sorted() == [
                "adminTokens", "bearerTokens", "requestKeys", "storePassword",
            ])
        #expect(ServiceSettings.known.values.filter { !$0.inFile }.map(\.key) == ["allowDevelopmentKeys"])
        let disabled = try await Self.settingsRead(
            environment: ["OTEL_SDK_DISABLED": "true", "SAML_SERVICE_REQUEST_KEYS": "1:\(String(repeating: "ab", count: 32))"],
            arguments: ["--allow-unauthenticated-api"])
        #expect(disabled == plain)
    }

    @Test("docs/service.md's configuration table lists every key read, and no other")
    func documented() async throws {
        let root = URL(fileURLWithPath: Service.vectors).deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent("docs/service.md"), encoding: .utf8)
        let section = try #require(text.components(separatedBy: "\n## Configuration\n").dropFirst().first)
        let rows = section.components(separatedBy: "\n## ")[0].split(separator: "\n").filter {
            $0.hasPrefix("| `") && !$0.contains("(URL parameter)")
        }
        var documented = Set<String>()
        for row in rows {
            let cell = row.split(separator: "|", omittingEmptySubsequences: true)[0]
            for (index, part) in cell.split(separator: "`", omittingEmptySubsequences: false).enumerated() where index % 2 == 1 {
                documented.insert(String(part))
            }
        }
        #expect(documented == (try await Self.settingsRead()))
    }

    @Test(
        "each provider spells a key its way: file member, SAML_SERVICE_ variable, --option; the command line over the environment over the file"
    )
    func spellings() async throws {
        #expect(ServiceSettings.environmentName("storeTimeoutSeconds") == "SAML_SERVICE_STORE_TIMEOUT_SECONDS")
        #expect(ServiceSettings.environmentName("spEntityID") == "SAML_SERVICE_SP_ENTITY_ID")
        #expect(ServiceSettings.environmentName("tracing.endpoint") == "SAML_SERVICE_TRACING_ENDPOINT")
        #expect(ServiceSettings.environmentName("authenticationTTLSeconds") == "SAML_SERVICE_AUTHENTICATION_TTLSECONDS")
        #expect(ServiceSettings.optionName("storeTimeoutSeconds") == "--store-timeout-seconds")
        #expect(ServiceSettings.optionName("tracing.exportIntervalSeconds") == "--tracing-export-interval-seconds")

        let file = try await ServiceConfiguration.load(contentsOf: Self.bundled, environment: [:])
        #expect(file.storeTimeout == .seconds(2) && file.port == 8080)
        let environment = try await ServiceConfiguration.load(
            contentsOf: Self.bundled,
            environment: [
                "SAML_SERVICE_STORE_TIMEOUT_SECONDS": "3.5", "SAML_SERVICE_PORT": "9000", "SAML_SERVICE_DOMAINS": "a.example,b.example",
                "SAML_SERVICE_USER_METADATA_MAPPING": "urn:oid:0.9.2342.19200300.100.1.1=userID,zip=zip",
                // swift-configuration's rule: a word ends only where a lowercase letter meets a capital.
                "SAML_SERVICE_MVPD_AUTHENTICATION_TTLSECONDS": "MVPD-A=60",
            ])
        #expect(environment.storeTimeout == .milliseconds(3500) && environment.port == 9000)
        #expect(environment.domains == ["a.example", "b.example"])
        #expect(environment.userMetadataMapping == ["urn:oid:0.9.2342.19200300.100.1.1": "userID", "zip": "zip"])
        #expect(environment.mvpdAuthenticationTTLs == ["MVPD-A": .seconds(60)])
        let arguments = try await ServiceConfiguration.load(
            contentsOf: Self.bundled, arguments: ["--store-timeout-seconds", "4", "--port=0", "--trust", "elsewhere/trust.json"],
            environment: ["SAML_SERVICE_STORE_TIMEOUT_SECONDS": "3.5", "SAML_SERVICE_PORT": "9000"])
        #expect(arguments.storeTimeout == .seconds(4) && arguments.port == 0)
        // A string keeps its commas (a multi-host URL); a list is split at them; a flag alone is true.
        let url = "postgres://saml@127.0.0.1:5432,127.0.0.1:5433/saml?target_session_attrs=read-write"
        let split = try await ServiceConfiguration.load(
            contentsOf: Self.bundled, arguments: ["--store", url, "--domains", "a.example,b.example", "c.example", "--allow-unsolicited"],
            environment: [:])
        #expect(split.store == url && split.domains == ["a.example", "b.example", "c.example"] && split.allowUnsolicited)
        // A path from the command line or the environment is taken as given; from the file, relative to it.
        #expect(arguments.trustPath == "elsewhere/trust.json" && file.trustPath.hasPrefix(Service.vectors))
    }

    @Test("an unknown option, variable or member, a secret on the command line, a mistyped value: refused, never quoting a secret")
    func refusals() async throws {
        func refused(
            arguments: [String] = [], environment: [String: String] = [:], path: String = Self.bundled, naming: String
        ) async {
            do {
                _ = try await ServiceConfiguration.load(contentsOf: path, arguments: arguments, environment: environment)
                Issue.record("accepted: \(arguments) \(environment.keys.sorted())")
            } catch let error as SAMLError {
                #expect(error.code == .configurationInvalid && error.message.contains(naming), "\(error.message)")
                #expect(!error.message.contains("hunter2"), "\(error.message)")
            } catch {
                Issue.record("not a SAMLError: \(error)")
            }
        }
        await refused(arguments: ["--prot", "0"], naming: "--prot")
        await refused(arguments: ["0"], naming: "before any option")
        await refused(arguments: ["--store-password", "hunter2"], naming: "SAML_SERVICE_STORE_PASSWORD")
        await refused(arguments: ["--bearer-tokens=hunter2"], naming: "command line")
        // A secret on the command line is refused as such before anything is read, whatever else is wrong.
        await refused(arguments: ["--request-keys", "hunter2"], naming: "command line")
        await refused(arguments: ["--bearer-tokens="], naming: "command line")
        await refused(arguments: ["--log-level", "bogus", "--store-password", "hunter2"], naming: "command line")
        await refused(environment: ["SAML_SERVICE_ALLOW_UNSOLICITD": "true"], naming: "SAML_SERVICE_ALLOW_UNSOLICITD")
        await refused(environment: ["SAML_SERVICE_MAXIMUM_CONNECTIONS": "many"], naming: "SAML_SERVICE_MAXIMUM_CONNECTIONS")
        await refused(arguments: ["--allow-unsolicited", "maybe"], naming: "--allow-unsolicited")
        await refused(environment: ["SAML_SERVICE_PORT": "70000"], naming: "port")
        await refused(environment: ["SAML_SERVICE_REQUEST_KEYS": "1:hunter2"], naming: "request-ID key 1")
        await refused(environment: ["SAML_SERVICE_USER_METADATA_MAPPING": "hunter2"], naming: "userMetadataMapping")
        // A secret in the file is read (the file is the operator's), but still never quoted.
        let folder = try TemporaryFiles.folder("settings")
        let path = folder.appendingPathComponent("service.json").path
        try Data(#"{"serviceProvider": "REF30", "mvpdConfiguration": "m.json", "trust": "t.json", "storePassword": "hunter2"}"#.utf8)
            .write(to: URL(fileURLWithPath: path))
        #expect(try await ServiceConfiguration.load(contentsOf: path, environment: [:]).storePassword == "hunter2")
        try Data(#"{"serviceProvider": "REF30", "mvpdConfiguration": "m.json", "trust": "t.json", "storePassword": 7}"#.utf8)
            .write(to: URL(fileURLWithPath: path))
        await refused(path: path, naming: "storePassword")
        try Data(#"{"serviceProvider": "REF30", "mvpdConfiguration": "m.json", "trust": "t.json", "tracing": {"endpont": "x"}}"#.utf8)
            .write(to: URL(fileURLWithPath: path))
        await refused(path: path, naming: "endpont")
        try Data(#"{"serviceProvider": "REF30", "mvpdConfiguration": "m.json", "trust": "t.json", "port": {"value": 1}}"#.utf8)
            .write(to: URL(fileURLWithPath: path))
        await refused(path: path, naming: "port")
        try Data(
            #"{"serviceProvider": "REF30", "mvpdConfiguration": "m.json", "trust": "t.json", "tracing": {"sampleRatio": {"a": 1}}}"#.utf8
        )
        .write(to: URL(fileURLWithPath: path))
        await refused(path: path, naming: "tracing.sampleRatio")
        try Data(#"{"serviceProvider": "REF30", "mvpdConfiguration": "m.json"}"#.utf8).write(to: URL(fileURLWithPath: path))
        await refused(path: path, naming: "trust")
    }
}
