/// Caps applied to untrusted XML (see `docs/security.md`).
///
/// Every cap is enforced by the pre-scan (`XMLPreScan`) on the raw bytes, in one linear pass, before libxml2 sees them:
/// libxml2 2.9's duplicate-attribute and namespace checks are quadratic in the number of attributes on
/// one element, so a cap checked on the parsed tree would come after the expensive work. The same caps
/// apply to every decrypted plaintext before it is parsed.
public struct XMLParserLimits: Sendable, Hashable {
    /// The largest document accepted, in bytes. Default 1 MiB.
    public var maximumDocumentBytes: Int = 1 << 20
    /// The deepest element nesting accepted. Default 64 (a signed SAML response needs about 10).
    public var maximumDepth: Int = 64
    /// The most elements accepted in one document. Default 20,000.
    public var maximumElements: Int = 20_000
    /// The most nodes accepted in one document: elements, runs of text, CDATA sections, comments and
    /// processing instructions, each a node of the tree libxml2 builds. Default 60,000 (a pretty-printed
    /// document of 20,000 elements has about 40,000).
    public var maximumNodes: Int = 60_000
    /// The most comments accepted before and after the document element. Default 8. A processing
    /// instruction there is refused whatever the limits (`xml.processing-instruction-forbidden`): a
    /// Reference with an empty URI would cover it.
    public var maximumCommentsOutsideDocumentElement: Int = 8
    /// The most attributes accepted on one element, namespace declarations included. Default 64.
    public var maximumAttributesPerElement: Int = 64
    /// The most namespace declarations (`xmlns`, `xmlns:p`) accepted on one element. Default 32.
    public var maximumNamespaceDeclarationsPerElement: Int = 32
    /// The most attributes accepted in one document, namespace declarations included. Default 20,000
    /// (the largest of 504 real and bundled responses has about 500). Each is a node of the tree, and
    /// libxml2 resolves a prefixed one by walking its element's ancestors: 40,000 of them under 55
    /// levels cost more than a login.
    public var maximumAttributes: Int = 20_000
    /// The most namespace declarations accepted in one document. Default 10,000 (IdPs that declare
    /// `xs` and `xsi` on every AttributeValue need two per value).
    public var maximumNamespaceDeclarations: Int = 10_000
    /// The most namespace declarations in scope at once (on an element and its ancestors). Default 64
    /// (a response has about 20). libxml2 resolves every prefixed name by walking the declarations in
    /// scope: 32 per element over 60 levels, within the other caps, made a 1 MiB document cost a second
    /// to parse.
    public var maximumNamespaceDeclarationsInScope: Int = 64
    /// The longest run of character data (text, CDATA) between two tags, and the longest comment or
    /// processing instruction, in bytes. Default 512 KiB (a Base64 CipherValue of a large assertion).
    public var maximumTextBytes: Int = 512 << 10
    /// The longest namespace prefix accepted, in bytes: of an element or attribute name, of a namespace
    /// declaration, and of an entry of an InclusiveNamespaces `PrefixList`. Default 64 (the longest in
    /// the 263 third-party and bundled responses measured is 6). Canonicalisation compares prefixes on
    /// every namespace search; the canonicaliser meters that work too, this cap keeps it cheap.
    public var maximumPrefixBytes: Int = 64
    /// The longest local name of an element or attribute accepted, in bytes. Default 256 (the longest
    /// measured is 55).
    public var maximumNameBytes: Int = 256
    /// The longest namespace URI accepted in a declaration, in bytes. Default 1,024 (the longest measured
    /// is 51). Canonicalisation compares the URIs of namespaced attributes when it sorts them.
    public var maximumNamespaceURIBytes: Int = 1024

    public init() {}
}
