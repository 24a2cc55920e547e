// Allocation-failure injection (docs/fuzzing.md): for each scenario, counts the allocations libxml2,
// libxmlsec1 and OpenSSL make along one verification after parsing (signatures, recovery, decryption,
// validation, extraction), then repeats it once for every N, with the Nth allocation failing. The parse
// itself is left out: libxml2 2.9.14 (Debian 12) dereferences NULL in its own parser when an allocation
// fails (robust from libxml2 2.11 on); parsing is covered by the fuzz targets instead. Every run must end with the right verdict or a typed SAMLError: never
// a crash (the process would die), an untyped error, or the acceptance of a response that must be
// refused. Leaks are LeakSanitizer's to find (the ASan suite runs this executable). Exit 0 when every
// run behaved; 1 otherwise. Usage: SAMLFaultInjection REPOSITORY-ROOT
import AppleSSO
import CSAMLFaultInjection
import Foundation
@_spi(Stages) import SAML

// Before anything touches OpenSSL: its allocator can only be replaced first.
guard saml_fault_install() == 0 else {
    FileHandle.standardError.write(Data("fault injection: OpenSSL's allocator could not be replaced\n".utf8))
    exit(2)
}

saml_fault_silence_libxml2()

let root = URL(fileURLWithPath: CommandLine.arguments.count > 1 ? CommandLine.arguments[1] : FileManager.default.currentDirectoryPath)
func file(_ path: String) -> [UInt8] {
    guard let data = FileManager.default.contents(atPath: root.appendingPathComponent(path).path) else {
        FileHandle.standardError.write(Data("fault injection: cannot read \(path)\n".utf8))
        exit(2)
    }
    return Array(data)
}

struct Scenario {
    var name: String
    var input: [UInt8]
    /// Whether a run without injected failure accepts it.
    var valid: Bool
}

let now = SAMLInstant(xmlDateTime: "2026-11-21T12:01:00Z")!
var configuration = SAMLResponseVerifier.Configuration(
    trustedKeys: try TrustedKey.all(pem: file("TestVectors/keys/rsa-2048.cert.pem")),
    issuer: .equals("https://idp.mvpd.example.com"), audience: .equals("https://saml.sp.auth.adobe.com"),
    destination: .equals("https://sp.example.com/api/v2/REF30/profiles/sso/Apple"), inResponseTo: .equals("_aq-3f9a1b2c"),
    replay: .skip)
configuration.decryptionKeys = [try DecryptionKey(pem: file("TestVectors/keys/sp-rsa-2048.key.pem"))]
let verifier = try SAMLResponseVerifier(configuration)

let scenarios = [
    Scenario(name: "valid, both signed", input: file("TestVectors/responses/typical-rsa2048-both-signed.xml"), valid: true),
    Scenario(
        name: "decryption (RSA-OAEP, AES-256-GCM)", input: file("TestVectors/responses/encrypted-assertion-oaep-aes256gcm.xml"), valid: true
    ),
    Scenario(name: "tampered", input: file("TestVectors/responses/tampered-attribute-value.xml"), valid: false),
    Scenario(
        name: "cookbook-damaged, recovered",
        input: try SAMLResponseDecoder().decode(try Cookbook.encode(utf8: file("TestVectors/recovery/xmlsec1-both.xml"))).bytes,
        valid: true),
]

enum Outcome: Hashable {
    case valid
    case refused(String)
    case untyped(String)
}

/// Parses without injected failures, then verifies with the Nth allocation failing (0: none). Returns
/// the outcome, the allocations counted and whether the failure happened.
func run(_ scenario: Scenario, failing n: Int) -> (outcome: Outcome, allocations: Int, fired: Bool) {
    let parsed: ParsedResponse
    do {
        parsed = try scenario.input.withUnsafeBytes { try verifier.parse($0) }
    } catch {
        return (.untyped("parse: \(error)"), 0, false)
    }
    saml_fault_arm(n)
    let outcome: Outcome
    do {
        let signed = try verifier.verifySignatures(parsed)
        _ = try verifier.validateAndExtract(parsed, signed: signed, now: now)
        outcome = .valid
    } catch let error as SAMLError {
        outcome = .refused(error.code.identifier)
    } catch {
        outcome = .untyped("\(error)")
    }
    let result = (outcome, saml_fault_allocations(), saml_fault_fired() != 0)
    saml_fault_arm(0)
    return result
}

var failures: [String] = []
for scenario in scenarios {
    let clean = run(scenario, failing: 0)
    guard scenario.valid ? clean.outcome == .valid : clean.outcome != .valid else {
        failures.append("\(scenario.name): without injected failures, \(clean.outcome)")
        continue
    }
    var outcomes: [Outcome: Int] = [:]
    for n in 1...max(1, clean.allocations) {
        if ProcessInfo.processInfo.environment["FAULT_TRACE"] != nil {
            FileHandle.standardError.write(Data("run \(scenario.name) \(n)\n".utf8))
        }
        let (outcome, _, fired) = run(scenario, failing: n)
        outcomes[outcome, default: 0] += 1
        switch outcome {
        case .untyped(let description):
            failures.append("\(scenario.name): allocation \(n) failing gave an untyped error \(description)")
        case .valid where !scenario.valid:
            failures.append("\(scenario.name): allocation \(n) failing made a response that must be refused accepted")
        case .valid, .refused:
            break
        }
        if !fired { break }  // fewer allocations than counted: nothing left to fail
    }
    let summary = outcomes.sorted { $0.value > $1.value }.map { outcome, count in
        switch outcome {
        case .valid: "valid \(count)"
        case .refused(let code): "\(code) \(count)"
        case .untyped(let description): "untyped \(description) \(count)"
        }
    }
    print("\(scenario.name): \(clean.allocations) allocations after parsing, each failed once: \(summary.joined(separator: ", "))")
}
if failures.isEmpty {
    print("fault injection: every run ended with the right verdict or a typed error")
    exit(0)
}
print(failures.joined(separator: "\n"))
exit(1)
