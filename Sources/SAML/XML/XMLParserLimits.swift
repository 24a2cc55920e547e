/// Caps applied while parsing untrusted XML (see `docs/security.md`).
public struct XMLParserLimits: Sendable, Hashable {
    /// The largest document accepted, in bytes. Default 1 MiB.
    public var maximumDocumentBytes: Int = 1 << 20
    /// The deepest element nesting accepted. Default 64 (a signed SAML response needs about 10).
    public var maximumDepth: Int = 64
    /// The most elements accepted in one document. Default 20,000.
    public var maximumElements: Int = 20_000
    /// The most attributes accepted on one element. Default 64.
    public var maximumAttributesPerElement: Int = 64

    public init() {}
}
