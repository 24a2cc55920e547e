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
