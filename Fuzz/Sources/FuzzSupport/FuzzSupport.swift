import Foundation
@_spi(Stages) public import SAML

/// What the fuzz targets share: the repository's test keys and vectors, one pinned verifier, and a check
/// that stops the run (libFuzzer then saves the input as a crash) when an invariant breaks.
public enum Fuzz {
    /// The repository root (this file is Fuzz/Sources/FuzzSupport/FuzzSupport.swift).
    public static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    public static func file(_ path: String) -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: root.appendingPathComponent(path).path) else {
            fatalError("fuzz support: cannot read \(path)")
        }
        return Array(data)
    }

    /// The instant the bundled vectors verify at (TestVectors/manifest.json `now`).
    public static let now = SAMLInstant(xmlDateTime: "2026-11-21T12:01:00Z")!

    /// A verifier pinned to TestVectors' RSA-2048 key, with the SP key for encrypted vectors, every
    /// expectation skipped (so that as many inputs as possible reach the signature and decryption code),
    /// SHA-1 and legacy encryption allowed.
    public static func verifier(recovery: Bool = true) -> SAMLResponseVerifier {
        do {
            var configuration = SAMLResponseVerifier.Configuration(
                trustedKeys: try TrustedKey.all(pem: file("TestVectors/keys/rsa-2048.cert.pem")),
                issuer: .skip, audience: .skip, destination: .skip, inResponseTo: .skip, replay: .skip)
            configuration.recipients = .skip
            configuration.maximumAge = nil
            configuration.algorithms = .allowingSHA1
            configuration.encryptionAlgorithms = .allowingLegacy
            configuration.decryptionKeys = [try DecryptionKey(pem: file("TestVectors/keys/sp-rsa-2048.key.pem"))]
            configuration.recoversNormalizationDamage = recovery
            return try SAMLResponseVerifier(configuration)
        } catch {
            fatalError("fuzz support: \(error)")
        }
    }

    /// Stops the run with `message` when `condition` is false.
    public static func require(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
        if !condition() {
            FileHandle.standardError.write(Data(("fuzz invariant broken: " + message() + "\n").utf8))
            abort()
        }
    }

    /// The seed files of a TestVectors subfolder (`.xml`).
    public static func vectors(_ folder: String) -> [[UInt8]] {
        let url = root.appendingPathComponent(folder)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []
        return names.filter { $0.hasSuffix(".xml") }.sorted().map { file(folder + "/" + $0) }
    }
}

@_silgen_name("LLVMFuzzerRunDriver")
private func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

/// The target's test function, set once by ``Fuzz/run(_:)`` before libFuzzer starts.
nonisolated(unsafe) private var testFunction: (@convention(c) (UnsafePointer<UInt8>?, Int) -> CInt)?

/// The entry point libFuzzer's objects refer to; calls the target's test function.
@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    testFunction?(data, count) ?? 0
}

extension Fuzz {
    /// Hands the process to libFuzzer with `body` as the test function; the command line is libFuzzer's.
    /// Built with `-sanitize=fuzzer`, which links libFuzzer.
    public static func run(_ body: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> Never {
        testFunction = body
        var argc = CommandLine.argc
        var argv = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv, LLVMFuzzerTestOneInput))
    }

    /// The input as a buffer (libFuzzer passes a null pointer for the empty input).
    public static func bytes(_ data: UnsafePointer<UInt8>?, _ count: Int) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: count > 0 ? data : nil, count: count)
    }
}
