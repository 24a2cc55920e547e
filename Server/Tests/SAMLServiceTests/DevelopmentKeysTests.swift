import Foundation
import SAML
import SAMLTestSupport
import Testing

@testable import SAMLService

/// The repository's test keys (their private halves are in `TestVectors/`) are never trusted by a service
/// that was not told it is a development run; and `serve` has no default configuration.
@Suite("Development keys and safe defaults")
struct DevelopmentKeysTests {
    /// Runs `openssl` with `arguments` on `input`; its standard output.
    static func openssl(_ arguments: [String], input: [UInt8]) throws -> [UInt8] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["openssl"] + arguments
        let stdin = Pipe()
        let stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = FileHandle.nullDevice
        try process.run()
        stdin.fileHandleForWriting.write(Data(input))
        try stdin.fileHandleForWriting.close()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Array(output)
    }

    @Test("every certificate under TestVectors/ is listed, by its certificate and by its public key")
    func everyTestKeyListed() throws {
        let root = URL(fileURLWithPath: Service.vectors)
        let certificates = try #require(FileManager.default.enumerator(atPath: root.path))
            .compactMap { $0 as? String }.filter { $0.hasSuffix(".cert.pem") }
        #expect(certificates.count >= 11)
        for path in certificates {
            let pem = Array(try Data(contentsOf: root.appendingPathComponent(path)))
            let key = try TrustedKey(pem: pem)
            #expect(DevelopmentKeys.fingerprints.contains(key.fingerprint), "\(path): certificate")
            let publicKey = try TrustedKey(pem: try Self.openssl(["x509", "-pubkey", "-noout"], input: pem))
            #expect(DevelopmentKeys.fingerprints.contains(publicKey.fingerprint), "\(path): public key")
            #expect(throws: SAMLError.self) { try DevelopmentKeys.check([publicKey], "a test", allowed: false) }
            try DevelopmentKeys.check([publicKey], "a test", allowed: true)
        }
    }

    @Test("the bundled trust file is refused unless development keys are allowed; fresh keys are not")
    func bundledTrustRefused() throws {
        var configuration = Service.configuration()
        configuration.allowDevelopmentKeys = false
        let error = #expect(throws: SAMLError.self) {
            _ = try ServiceApplication.buildApplication(configuration: configuration, logger: Service.quiet)
        }
        #expect(error?.code == .configurationInvalidKey)
        #expect(error?.message.contains("--allow-development-keys") == true)

        // A key made now is not a development key.
        let directory = try TemporaryFiles.folder("fresh")
        let certificate = directory.appendingPathComponent("idp.cert.pem").path
        let make = Process()
        make.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        make.arguments = [
            "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj", "/CN=idp",
            "-days", "2", "-keyout", directory.appendingPathComponent("idp.key.pem").path, "-out", certificate,
        ]
        make.standardError = FileHandle.nullDevice
        try make.run()
        make.waitUntilExit()
        let trust = directory.appendingPathComponent("trust.json").path
        try Data(#"{"MVPD-A": {"issuer": "https://idp.example", "certificates": ["\#(certificate)"]}}"#.utf8).write(
            to: URL(fileURLWithPath: trust))
        configuration.trustPath = trust
        _ = try ServiceApplication.buildApplication(configuration: configuration, logger: Service.quiet)
    }

    @Test("the environment and the command line can allow development keys; the configuration file cannot")
    func switchOnlyOutsideTheFile() async throws {
        let directory = try TemporaryFiles.folder("config")
        let path = directory.appendingPathComponent("service.json").path
        try Data(#"{"serviceProvider": "REF30", "mvpdConfiguration": "m.json", "trust": "t.json"}"#.utf8).write(
            to: URL(fileURLWithPath: path))
        #expect(try await !ServiceConfiguration.load(contentsOf: path, environment: [:]).allowDevelopmentKeys)
        #expect(
            try await ServiceConfiguration.load(contentsOf: path, environment: ["SAML_SERVICE_ALLOW_DEVELOPMENT_KEYS": "true"])
                .allowDevelopmentKeys)
        #expect(
            try await ServiceConfiguration.load(contentsOf: path, arguments: ["--allow-development-keys"], environment: [:])
                .allowDevelopmentKeys)
        // swift-configuration's booleans: true/false, yes/no, 1/0; anything else is refused, not read as false.
        await #expect(throws: SAMLError.self) {
            try await ServiceConfiguration.load(contentsOf: path, environment: ["SAML_SERVICE_ALLOW_DEVELOPMENT_KEYS": "maybe"])
        }
        try Data(
            #"{"serviceProvider": "REF30", "mvpdConfiguration": "m.json", "trust": "t.json", "allowDevelopmentKeys": true}"#.utf8
        ).write(to: URL(fileURLWithPath: path))
        await #expect(throws: SAMLError.self) { try await ServiceConfiguration.load(contentsOf: path, environment: [:]) }
    }

    @Test("saml-server serve without --config or SAML_SERVICE_CONFIG refuses to start, whatever the directory holds")
    func serveNeedsAConfiguration() throws {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("saml-server").path
        try #require(FileManager.default.isExecutableFile(atPath: binary), "build saml-server first (swift build)")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["serve", "--port", "0"]
        // From the repository's root, where TestVectors/exchange/service.json is.
        process.currentDirectoryURL = URL(fileURLWithPath: Service.vectors).deletingLastPathComponent()
        process.environment = ProcessInfo.processInfo.environment.filter { $0.key != "SAML_SERVICE_CONFIG" }
        let stderr = Pipe()
        process.standardError = stderr
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let output = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus != 0)
        #expect(output.contains("--config"), "\(output.prefix(300))")
    }
}
