import CSAMLBaseline
import SAML

/// The full path a Token Exchange backend runs: decode the posted Base64, parse, verify, validate,
/// extract the fields. Throws when the verdict is not "valid", so that a tampered input fails the
/// benchmark instead of making it faster.
public enum Pipeline {
    /// Runs the path on `transported` (the posted bytes: a form body, Base64 or XML), or on the input's
    /// own encoding when nil, with the input's verifier, instant and fields.
    @discardableResult
    public static func run(
        _ input: BenchInput, transported: [UInt8]? = nil, decoder: SAMLResponseDecoder = SAMLResponseDecoder()
    ) throws -> Int {
        let decoded = try decoder.decode(transported ?? input.transported)
        let response = try input.verifier.verifyWithoutReplayCheck(decoded.bytes, at: input.now)
        let fields = try response.fields(input.fields)
        return fields.values.reduce(0) { $0 + $1.values.count }
    }
}

/// The minimal C program over libxml2 + libxmlsec1 (see CSAMLBaseline.h), on the same input.
///
/// `@unchecked Sendable`: the C object holds one key that is only read (duplicated per verification,
/// which takes an atomic reference on the OpenSSL key), so concurrent calls are safe.
public final class CBaseline: @unchecked Sendable {
    private let baseline: OpaquePointer

    public init(certificatePEM: [UInt8]) throws {
        try XMLSecRuntime.initialize()
        guard let created = certificatePEM.withUnsafeBufferPointer({ saml_baseline_create($0.baseAddress, $0.count) }) else {
            throw SAMLError(.configurationInvalidKey, "expected a PEM certificate the C baseline can load")
        }
        baseline = created
    }

    deinit {
        saml_baseline_destroy(baseline)
    }

    /// Verifies once; throws when the C program rejects the input.
    @discardableResult
    public func run(_ input: BenchInput) throws -> Int {
        let values = input.transported.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { saml_baseline_verify(baseline, $0.baseAddress, $0.count) }
        }
        guard values >= 0 else {
            throw SAMLError(.signatureInvalid, "expected the C baseline to verify \(input.name), it did not")
        }
        return Int(values)
    }
}

/// The floor of primitives (CSAMLPrimitives.h) on an input: libxml2's parse, libxml2's exclusive C14N of
/// the signed element, SHA-256, the one public-key verification, and nothing else. Only inputs signed
/// with RSA-SHA256 have a floor.
///
/// `@unchecked Sendable`: the C object is only read (its key and digest fetched once are reference
/// counted by OpenSSL), so concurrent calls are safe.
public final class PrimitivesFloor: @unchecked Sendable {
    private let primitives: OpaquePointer
    /// The decoded XML the primitives start from.
    private let xml: [UInt8]

    /// Nil when the input has no floor (another algorithm, an encrypted assertion, a signature that does
    /// not verify with the primitives alone).
    public convenience init?(_ input: BenchInput) {
        guard let decoded = try? SAMLResponseDecoder().decode(input.transported) else { return nil }
        self.init(xml: decoded.bytes, certificatePEM: input.certificatePEM)
    }

    /// The floor of the XML document `xml` signed with the key of `certificatePEM`; nil when the
    /// primitives alone do not verify it.
    public init?(xml: [UInt8], certificatePEM: [UInt8]) {
        guard (try? XMLSecRuntime.initialize()) != nil else { return nil }
        self.xml = xml
        let created = certificatePEM.withUnsafeBufferPointer { pem in
            xml.withUnsafeBufferPointer { xml in
                xml.withMemoryRebound(to: CChar.self) { saml_primitives_create(pem.baseAddress, pem.count, $0.baseAddress, $0.count) }
            }
        }
        guard let created else { return nil }
        primitives = created
    }

    deinit {
        saml_primitives_destroy(primitives)
    }

    /// Runs the primitives once; throws when they do not verify (never, for an input that has a floor).
    @discardableResult
    public func run() throws -> Int {
        let length = xml.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { saml_primitives_run(primitives, $0.baseAddress, $0.count) }
        }
        guard length > 0 else { throw SAMLError(.signatureInvalid, "expected the primitives to verify, they did not") }
        return length
    }
}
