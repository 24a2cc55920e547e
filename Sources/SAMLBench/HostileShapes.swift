import Foundation
import SAML
import SAMLMockIdP

/// Responses built to make an unauthenticated request cost far more than a login (issue 33), each with
/// the refusal it must get, and valid responses of the same sizes to compare their cost with
/// (`saml bench --hostile`, BENCHMARKS.md, and the tests that check the verdicts).
///
/// Every shape is derived from a bundled vector (its signature no longer matches: none needs to, since
/// each must be refused before any digest is compared). Sizes follow the reports they come from.
public struct HostileShape: Sendable {
    public let name: String
    public let description: String
    public let xml: [UInt8]
    /// The code the verifier must refuse it with.
    public let expectedCode: String
    public let verifier: SAMLResponseVerifier
    public let now: SAMLInstant
}

public enum HostileShapes {
    /// What every vector below is verified with: the bundled typical response's expectations.
    static let now = SAMLInstant(xmlDateTime: "2026-11-21T12:01:00Z")!
    static let destination = "https://sp.example.com/api/v2/REF30/profiles/sso/Apple"
    static let requestID = "_aq-3f9a1b2c"

    /// The shapes, built from the vectors of a TestVectors/ folder.
    public static func all(directory: URL) throws -> [HostileShape] {
        func read(_ path: String) throws -> [UInt8] { Array(try Data(contentsOf: directory.appendingPathComponent(path))) }
        let typical = String(decoding: try read("responses/typical-rsa2048-assertion-signed.xml"), as: UTF8.self)
        let responseSigned = String(decoding: try read("responses/typical-rsa2048-response-signed.xml"), as: UTF8.self)
        let verifier = try Self.verifier(
            certificatePEM: try read("keys/rsa-2048.cert.pem"), decryptionKeyPEM: try read("keys/sp-rsa-2048.key.pem"))
        let longURI = "urn:" + String(repeating: "a", count: 1_000)  // at the cap of XMLParserLimits.maximumNamespaceURIBytes
        func shape(_ name: String, _ description: String, _ xml: String, _ code: String) -> HostileShape {
            HostileShape(name: name, description: description, xml: Array(xml.utf8), expectedCode: code, verifier: verifier, now: now)
        }

        var shapes: [HostileShape] = []
        let xpathID = "x')|//*[count(//*[count(//*)>0])>0]|id('x"
        shapes.append(
            shape(
                "xpath-in-id", "Assertion ID holding an XPath expression, referenced as '#' + that ID (about 8 KB)",
                typical.replacingOccurrences(of: "_assert-typical", with: xpathID), "id.malformed"))

        // Exclusive C14N writes a declaration again on each element that uses a namespace no rendered
        // ancestor declares: 1 KB declared once, used by 10,000 children.
        let amplified = try insertingAttribute(
            typical, content: String(repeating: "<p:x/>", count: 10_000), declaring: " xmlns:p=\"\(longURI)\"")
        shapes.append(
            shape(
                "exc-c14n-namespace-amplification",
                "a 1 KB namespace URI declared once on the Response, used by 10,000 children inside the signed Assertion",
                amplified, "signature.budget-exceeded"))

        // The same with the default namespace, under a Response signature whose Reference URI is "".
        let issuerEnd = try range(of: "</saml:Issuer>", in: responseSigned)
        var defaultNamespace = responseSigned
        defaultNamespace.insert(
            contentsOf: "<samlp:Extensions>" + String(repeating: "<x/>", count: 10_000) + "</samlp:Extensions>", at: issuerEnd.upperBound)
        defaultNamespace = try declaring(" xmlns=\"\(longURI)\"", onRootOf: defaultNamespace)
        let responseID = try attributeValue("ID", in: defaultNamespace)
        defaultNamespace = defaultNamespace.replacingOccurrences(of: "URI=\"#\(responseID)\"", with: "URI=\"\"")
        shapes.append(
            shape(
                "exc-c14n-default-namespace-amplification",
                "a 1 KB default namespace declared on the Response (Reference URI \"\"), used by 10,000 children in Extensions",
                defaultNamespace, "signature.budget-exceeded"))

        // The amplification inside an encrypted assertion's plaintext (the declaration stays on the Response).
        let mock = try MockIdentityProvider(
            privateKeyPEM: try read("keys/rsa-2048.key.pem"), certificatePEM: try read("keys/rsa-2048.cert.pem"))
        let encrypted = try mock.encryptingAssertion(of: Array(amplified.utf8), for: TrustedKey(pem: try read("keys/sp-rsa-2048.cert.pem")))
        shapes.append(
            HostileShape(
                name: "encrypted-plaintext-namespace-amplification",
                description: "the same amplification inside an EncryptedAssertion's plaintext (AES-256-GCM, RSA-OAEP)", xml: encrypted,
                expectedCode: "signature.budget-exceeded", verifier: verifier, now: now))

        // Combining marks: Swift's `==` and hashing normalise, and normalising a run of non-starters is
        // quadratic in its length (about 0.9 s for 30,000 pairs in the Response's Version). The pre-scan
        // refuses a run of more than 30 (Unicode's stream-safe text, StreamSafeText.swift).
        let run = String(repeating: "\u{0301}\u{0327}", count: 60_000)
        shapes.append(
            shape(
                "combining-marks-run-in-version",
                "the Response's and the Assertion's Version: \"2\" and 60,000 pairs of combining marks (about 480 KB)",
                typical.replacingOccurrences(of: "Version=\"2.0\" IssueInstant", with: "Version=\"2\(run)\" IssueInstant"),
                "xml.limit-exceeded"))
        let exclusiveC14N = "Algorithm=\"http://www.w3.org/2001/10/xml-exc-c14n#"
        shapes.append(
            shape(
                "combining-marks-run-in-algorithm",
                "SignedInfo's CanonicalizationMethod naming exclusive C14N followed by 60,000 pairs of combining marks",
                typical.replacingOccurrences(
                    of: "<ds:CanonicalizationMethod \(exclusiveC14N)\"/>", with: "<ds:CanonicalizationMethod \(exclusiveC14N)\(run)\"/>"),
                "xml.limit-exceeded"))
        // The same runs written as character references (ASCII to the pre-scan, marks once libxml2 has
        // read them), and as raw marks split by comments (the verifier joins an element's text without them).
        let references = String(repeating: "&#836;&#790;", count: 21_000)
        let issuer = "<saml:Issuer>https://idp.mvpd.example.com</saml:Issuer>"
        let splitRun = String(repeating: String(repeating: "\u{0301}\u{0327}", count: 10) + "<!--x-->", count: 6_000)
        shapes.append(
            shape(
                "combining-marks-as-character-references",
                "both Issuers: \"h\" and 42,000 combining marks written as character references (&#836;&#790;), in each (about 500 KB in all)",
                typical.replacingOccurrences(of: issuer, with: "<saml:Issuer>h\(references)</saml:Issuer>"),
                "xml.limit-exceeded"))
        shapes.append(
            shape(
                "combining-marks-split-by-comments",
                "both Issuers: \"h\" and 120,000 combining marks in runs of 20 between comments (`<!--x-->`), in each (about 580 KB in all)",
                typical.replacingOccurrences(of: issuer, with: "<saml:Issuer>h\(splitRun)</saml:Issuer>"),
                "xml.limit-exceeded"))
        // Within the limit, IDs are compared byte for byte, as libxml2 and libxmlsec1 compare them: the
        // Reference URI names the Assertion's ID with each pair of marks swapped (canonically equivalent,
        // other bytes).
        let marks = String(repeating: "\u{0301}\u{0327}", count: 15)
        let swapped = String(repeating: "\u{0327}\u{0301}", count: 15)
        shapes.append(
            shape(
                "combining-marks-in-ids",
                "Response and Assertion IDs ending in 15 pairs of combining marks, the Reference URI with each pair swapped",
                typical.replacingOccurrences(of: "URI=\"#_assert-typical\"", with: "URI=\"#_assert-typical\(swapped)\"")
                    .replacingOccurrences(of: "ID=\"_assert-typical\"", with: "ID=\"_assert-typical\(marks)\"")
                    .replacingOccurrences(of: "ID=\"_resp-typical\"", with: "ID=\"_resp-typical\(marks)\""),
                "signature.reference-mismatch"))

        // An InclusiveNamespaces PrefixList searched on every element.
        func prefixList(_ count: Int) -> String {
            "<ec:InclusiveNamespaces xmlns:ec=\"http://www.w3.org/2001/10/xml-exc-c14n#\" PrefixList=\""
                + (0..<count).map { "p\($0)" }.joined(separator: " ") + "\"/>"
        }
        let referenceC14N = "<ds:Transform Algorithm=\"http://www.w3.org/2001/10/xml-exc-c14n#\"/>"
        func withPrefixList(_ count: Int, elements: Int) throws -> String {
            let listed = typical.replacingOccurrences(
                of: referenceC14N,
                with: "<ds:Transform Algorithm=\"http://www.w3.org/2001/10/xml-exc-c14n#\">\(prefixList(count))</ds:Transform>")
            return try insertingAttribute(listed, content: String(repeating: "<saml:x/>", count: elements))
        }
        shapes.append(
            shape(
                "prefix-list-20000-over-5000", "a Reference PrefixList of 20,000 prefixes over 5,000 elements",
                try withPrefixList(20_000, elements: 5_000), "signature.budget-exceeded"))
        shapes.append(
            shape(
                "prefix-list-32-over-19000", "a PrefixList at the cap (32 prefixes) over 19,000 elements: past the namespace-work budget",
                try withPrefixList(32, elements: 19_000), "signature.budget-exceeded"))
        // The same as the cookbook leaves a pretty-printed response (no newline anywhere, one space between
        // elements): the failed digest sends it to the recovery of the cookbook's damage, which
        // would canonicalise it again; its canonicalisation for the trials has a tighter namespace budget, so
        // it is refused without one.
        let spaced = try withPrefixList(32, elements: 2_500).replacingOccurrences(of: "\n", with: "")
            .replacingOccurrences(of: "<saml:x/><saml:x/>", with: "<saml:x/> <saml:x/> ")
            .replacingOccurrences(of: "</saml:Issuer><", with: "</saml:Issuer> <")
        shapes.append(
            shape(
                "prefix-list-32-over-2500-cookbook-shaped",
                "the same with no newline and one space between elements: recovery retries the layouts, each canonicalised again",
                spaced, "signature.normalisation-damage"))
        shapes.append(
            shape(
                "prefix-list-32-over-2500",
                "a PrefixList at the cap over 2,500 elements: within the budget, canonicalised, then the digest differs (what the budget lets through)",
                try withPrefixList(32, elements: 2_500), "signature.digest-mismatch"))

        // Inclusive C14N compares every in-scope declaration with every other one, on every element.
        func chain(levels: Int, declarations: Int, leaves: Int) throws -> String {
            let inclusive = typical.replacingOccurrences(
                of: referenceC14N, with: "<ds:Transform Algorithm=\"http://www.w3.org/TR/2001/REC-xml-c14n-20010315\"/>")
            return try insertingAttribute(
                inclusive, content: try chainContent(levels: levels, declarations: declarations, leaves: leaves))
        }
        // libxml2 did the namespace work of every element of the document, signed or not: a chain outside
        // the signed Assertion, reached through SignedInfo's own CanonicalizationMethod made inclusive
        // (which anyone can do to any response). The package's canonicaliser walks SignedInfo's subtree.
        let outside = typical.replacingOccurrences(
            of: "<ds:CanonicalizationMethod Algorithm=\"http://www.w3.org/2001/10/xml-exc-c14n#\"/>",
            with: "<ds:CanonicalizationMethod Algorithm=\"http://www.w3.org/TR/2001/REC-xml-c14n-20010315\"/>")
        var extensions = outside
        extensions.insert(
            contentsOf: "<samlp:Extensions>" + (try chainContent(levels: 2, declarations: 30, leaves: 15_000)) + "</samlp:Extensions>",
            at: try range(of: "</saml:Issuer>", in: outside).upperBound)
        shapes.append(
            shape(
                "inclusive-c14n-namespace-chain-outside-signed-part",
                "SignedInfo canonicalised inclusively, 2 nested elements of 30 declarations and 15,000 leaves in Extensions, outside the signed Assertion: "
                    + "the canonicaliser writes SignedInfo's subtree alone, so the chain costs nothing and the changed SignedInfo fails the signature",
                extensions, "signature.invalid"))

        // EncryptedKeys made with the SP's public certificate: each would cost an RSA decryption per SP key.
        let encryptedVector = String(decoding: try read("responses/encrypted-assertion-oaep-aes256gcm.xml"), as: UTF8.self)
        let keyStart = try range(of: "<xenc:EncryptedKey>", in: encryptedVector)
        let keyEnd = try range(of: "</xenc:EncryptedKey>", in: encryptedVector)
        let encryptedKey = encryptedVector[keyStart.lowerBound..<keyEnd.upperBound]
        shapes.append(
            shape(
                "encrypted-keys-1000", "an EncryptedAssertion whose KeyInfo carries its EncryptedKey 1,000 times",
                encryptedVector.replacingCharacters(
                    in: keyStart.lowerBound..<keyEnd.upperBound, with: String(repeating: String(encryptedKey), count: 1_000)),
                "decryption.failed"))

        // The issue's shape: 50 nested elements of 32 declarations (1,600 in scope) pass every per-element
        // cap; libxml2's parser alone spends seconds on such a scope, so the pre-scan refuses it.
        for leaves in [200, 2_000] {
            shapes.append(
                shape(
                    "inclusive-c14n-namespace-chain-\(leaves)",
                    "inclusive C14N over 50 nested elements declaring 32 namespaces each, then \(leaves) leaves: refused before parsing",
                    try chain(levels: 50, declarations: 32, leaves: leaves), "xml.limit-exceeded"))
        }
        // Within the cap of 64 declarations in scope, the budget stops the canonicalisation.
        shapes.append(
            shape(
                "inclusive-c14n-62-in-scope-15000-leaves",
                "inclusive C14N over 2 nested elements of 30 declarations (62 in scope with the Response's), then 15,000 leaves",
                try chain(levels: 2, declarations: 30, leaves: 15_000), "signature.budget-exceeded"))
        shapes += try nodeShapes(responseSigned: responseSigned, typical: typical, shape: shape)
        var raised = verifier.configuration
        raised.parserLimits.maximumPrefixBytes = 1 << 20
        raised.parserLimits.maximumNamespaceURIBytes = 1 << 20
        shapes += try meteredShapes(typical: typical, raisedLimits: try SAMLResponseVerifier(raised), shape: shape)
        return shapes
    }

    /// Issue 48: nodes outside the document element, nodes of every kind inside it, and exclusive C14N's
    /// rendered-namespace stack; each about 1 MB (the decoder's cap is 1 MiB).
    static func nodeShapes(
        responseSigned: String, typical: String, shape: (String, String, String, String) -> HostileShape
    ) throws -> [HostileShape] {
        // A Reference URI "" covers the whole document: libxmlsec1 builds its node set from every child of
        // the document with a linear duplicate check, and tests visibility against that set per node.
        let responseID = try attributeValue("ID", in: responseSigned)
        let emptyURI = responseSigned.replacingOccurrences(of: "URI=\"#\(responseID)\"", with: "URI=\"\"")
        let fill = 1_000_000 - emptyURI.utf8.count
        var shapes = [
            shape(
                "empty-uri-trailing-processing-instructions",
                "a Response signed with Reference URI \"\", followed by 200,000 processing instructions after its end",
                emptyURI + String(repeating: "<?p?>", count: fill / 5), "xml.processing-instruction-forbidden"),
            shape(
                "empty-uri-trailing-comments", "the same with 140,000 comments after the end of the Response",
                emptyURI + String(repeating: "<!---->", count: fill / 7), "xml.limit-exceeded"),
        ]
        // The same nodes inside the document element (in Extensions, outside the signed part), where they
        // are legal: each is a node of the tree, counted like an element.
        var inside = responseSigned
        inside.insert(
            contentsOf: "<samlp:Extensions>" + String(repeating: "<?p?><!---->", count: fill / 12) + "</samlp:Extensions>",
            at: try range(of: "</saml:Issuer>", in: responseSigned).upperBound)
        shapes.append(
            shape(
                "processing-instructions-and-comments-inside",
                "83,000 processing instructions and as many comments in the Response's Extensions", inside, "xml.limit-exceeded"))
        // Exclusive C14N keeps one rendered-namespace entry per namespaced attribute of every visible
        // ancestor, and searches them all for a prefix no ancestor rendered: 55 nested elements of 60
        // namespaced attributes, around leaves whose element and attributes each use such a prefix.
        let nested = (0..<55).map { level in
            "<a:n" + (level == 0 ? " xmlns:a=\"urn:a\" xmlns:b=\"urn:b\" xmlns:c=\"urn:c\" xmlns:d=\"urn:d\"" : "")
                + (0..<60).map { " a:x\($0)=\"\"" }.joined() + ">"
        }.joined()
        // (8,000 leaves of two attributes: the document's 20,000 attributes at most, with the byte size.)
        let value = String(repeating: "v", count: 46)
        let leaves = String(repeating: "<b:l c:y=\"\(value)\" d:z=\"\(value)\"/>", count: 8_000)
        shapes.append(
            shape(
                "exc-c14n-rendered-namespace-stack",
                "55 nested elements of 60 namespaced attributes in the signed Assertion, around 8,000 leaves of three other prefixes",
                try insertingAttribute(typical, content: nested + leaves + String(repeating: "</a:n>", count: 55)),
                "signature.budget-exceeded"))
        return shapes
    }

    /// Issue 61: string comparisons the canonicaliser makes, long enough to cost seconds. At the sizes the
    /// review reported they pass no cap of the pre-scan (24 KB namespace URIs, 8 KB prefixes); within the
    /// caps (1 KB URIs, 64-byte prefixes) they pass the early estimate, and only the canonicaliser's fuel
    /// stops them. `HostileShapes.metered` builds any size of them (the tests run the reported sizes with
    /// the caps raised, to show that the fuel alone bounds them).
    static func meteredShapes(
        typical: String, raisedLimits: SAMLResponseVerifier, shape: (String, String, String, String) -> HostileShape
    ) throws -> [HostileShape] {
        // The reported sizes again with the pre-scan's caps raised: what the fuel alone allows at about 1 MB.
        func uncapped(_ name: String, _ description: String, _ xml: String) -> HostileShape {
            HostileShape(
                name: name, description: description + " (caps raised: the fuel alone)", xml: Array(xml.utf8),
                expectedCode: "signature.budget-exceeded", verifier: raisedLimits, now: now)
        }
        return [
            uncapped(
                "attribute-sort-24kb-uris-uncapped", "32 declarations of 24 KB URIs used by 300 elements of 64 attributes",
                try metered(.attributeSort, typical: typical, length: 24_000, elements: 300)),
            uncapped(
                "attribute-sort-24kb-uris-inclusive-uncapped", "the same under inclusive C14N 1.0",
                try metered(.attributeSort, typical: typical, length: 24_000, elements: 300, inclusive: true)),
            uncapped(
                "inclusive-in-scope-8kb-prefixes-uncapped", "inclusive C14N 1.0 with 58 in-scope 8 KB prefixes around 1,000 children",
                try metered(.inclusiveScope, typical: typical, length: 8_000, elements: 1_000, inclusive: true)),
            shape(
                "attribute-sort-24kb-uris",
                "32 declarations of 24 KB URIs with one stem, used by 300 elements of 64 attributes (the review's size)",
                try metered(.attributeSort, typical: typical, length: 24_000, elements: 300), "xml.limit-exceeded"),
            shape(
                "attribute-sort-1kb-uris",
                "the same at the cap of 1 KB URIs, 100 elements: each sort compares URIs 2,016 times, within the estimate, past the fuel",
                try metered(.attributeSort, typical: typical, length: 1_000, elements: 100), "signature.budget-exceeded"),
            shape(
                "attribute-sort-1kb-uris-inclusive", "the same under inclusive C14N 1.0 (libxml2's own sort in earlier releases)",
                try metered(.attributeSort, typical: typical, length: 1_000, elements: 100, inclusive: true), "signature.budget-exceeded"),
            shape(
                "prefix-search-8kb-prefixes",
                "a PrefixList of 32 undeclared 8 KB prefixes sharing a stem with 58 declared ones (the review's size)",
                try metered(.prefixSearch, typical: typical, length: 8_000, elements: 40), "xml.limit-exceeded"),
            shape(
                "prefix-search-64-byte-prefixes",
                "the same at the cap of 64-byte prefixes, 300 elements: within the namespace-work estimate, past the fuel",
                try metered(.prefixSearch, typical: typical, length: 64, elements: 300), "signature.budget-exceeded"),
            shape(
                "inclusive-in-scope-64-byte-prefixes",
                "inclusive C14N 1.0 with 58 in-scope 64-byte prefixes sharing a stem, around 200 children: within the estimate, past the fuel",
                try metered(.inclusiveScope, typical: typical, length: 64, elements: 200, inclusive: true), "signature.budget-exceeded"),
        ]
    }

    /// The string comparisons a shape of ``metered(_:typical:length:elements:inclusive:)`` multiplies.
    public enum MeteredKind: Sendable {
        /// Namespaced attributes of 32 declarations whose URIs share a stem of `length` bytes: the
        /// attribute sort compares the URIs of every pair of attributes of different declarations.
        case attributeSort
        /// A PrefixList of 32 undeclared `length`-byte prefixes sharing a stem with 58 declared ones: every
        /// element searches the declarations in scope for each entry.
        case prefixSearch
        /// 58 declarations in scope of `length`-byte prefixes sharing a stem: inclusive C14N searches the
        /// scope for each of them on every element.
        case inclusiveScope
    }

    /// `typical` with one shape of `kind` in the signed Assertion: strings of `length` bytes, `elements`
    /// elements; the Reference's transform inclusive C14N 1.0 when `inclusive`.
    public static func metered(_ kind: MeteredKind, typical: String, length: Int, elements: Int, inclusive: Bool = false) throws -> String {
        let referenceC14N = "<ds:Transform Algorithm=\"http://www.w3.org/2001/10/xml-exc-c14n#\"/>"
        var xml = typical
        if inclusive {
            xml = xml.replacingOccurrences(
                of: referenceC14N, with: "<ds:Transform Algorithm=\"http://www.w3.org/TR/2001/REC-xml-c14n-20010315\"/>")
        }
        let stem = String(repeating: "s", count: max(1, length - 4))
        func prefix(_ index: Int) -> String { "p" + stem + String(index) }  // the prefixes differ only at their end
        switch kind {
        case .attributeSort:
            let declarations = (0..<32).map { " xmlns:q\($0)=\"urn:\(stem)\($0)\"" }.joined()
            let attributes = (0..<64).map { " q\($0 % 32):a\($0)=\"\"" }.joined()
            // A parent that uses every declaration renders them once; its children only sort.
            let content =
                "<saml:d\(declarations)><saml:w\(attributes)>" + String(repeating: "<saml:e\(attributes)/>", count: elements)
                + "</saml:w></saml:d>"
            return try insertingAttribute(xml, content: content)
        case .prefixSearch, .inclusiveScope:
            let outer = (0..<29).map { " xmlns:\(prefix($0))=\"urn:a\($0)\"" }.joined()
            let inner = (29..<58).map { " xmlns:\(prefix($0))=\"urn:a\($0)\"" }.joined()
            let content = "<saml:w\(outer)><saml:w\(inner)>" + String(repeating: "<saml:e/>", count: elements) + "</saml:w></saml:w>"
            if kind == .prefixSearch {
                let list = (100..<132).map(prefix).joined(separator: " ")
                xml = xml.replacingOccurrences(
                    of: referenceC14N,
                    with: "<ds:Transform Algorithm=\"http://www.w3.org/2001/10/xml-exc-c14n#\"><ec:InclusiveNamespaces "
                        + "xmlns:ec=\"http://www.w3.org/2001/10/xml-exc-c14n#\" PrefixList=\"\(list)\"/></ds:Transform>")
            }
            return try insertingAttribute(xml, content: content)
        }
    }

    /// `levels` nested elements declaring `declarations` namespaces each, around `leaves` empty elements.
    static func chainContent(levels: Int, declarations: Int, leaves: Int) throws -> String {
        let open = (0..<levels).map { level in
            "<c:e xmlns:c=\"urn:c\""
                + (0..<(declarations - 1)).map { " xmlns:l\(level)n\($0)=\"urn:l\(level):n\($0)\"" }.joined() + ">"
        }.joined()
        return open + String(repeating: "<c:leaf/>", count: leaves) + String(repeating: "</c:e>", count: levels)
    }

    /// A valid response of about `bytes` bytes signed on its Assertion by the mock IdP with the bundled
    /// RSA-2048 key (its attributes padded), with a verifier for it: the cost of a real login of that size.
    public static func typical(bytes: Int, directory: URL) throws -> (xml: [UInt8], verifier: SAMLResponseVerifier, now: SAMLInstant) {
        func read(_ path: String) throws -> [UInt8] { Array(try Data(contentsOf: directory.appendingPathComponent(path))) }
        let certificate = try read("keys/rsa-2048.cert.pem")
        let mock = try MockIdentityProvider(privateKeyPEM: try read("keys/rsa-2048.key.pem"), certificatePEM: certificate)
        var template = MockIdentityProvider.Template()
        template.destination = destination
        template.inResponseTo = requestID
        let base = template.attributes
        func make(_ padding: Int) throws -> [UInt8] {
            template.attributes = base + (0..<padding).map { ("padding-\($0)", ["value-\($0)-" + String(repeating: "v", count: 80)]) }
            return try mock.response(template, issuedAt: now - .seconds(1), placement: .assertion)
        }
        let unpadded = try make(0)
        let perAttribute = try make(10).count - unpadded.count
        let xml = try make(max(0, (bytes - unpadded.count) / max(1, perAttribute / 10)))
        return (xml, try verifier(certificatePEM: certificate, decryptionKeyPEM: nil), now)
    }

    static func verifier(certificatePEM: [UInt8], decryptionKeyPEM: [UInt8]?) throws -> SAMLResponseVerifier {
        var configuration = SAMLResponseVerifier.Configuration(
            trustedKeys: try TrustedKey.all(pem: certificatePEM), issuer: .equals("https://idp.mvpd.example.com"),
            audience: .equals("https://saml.sp.auth.adobe.com"), destination: .equals(destination), inResponseTo: .equals(requestID),
            replay: .skip)
        if let decryptionKeyPEM { configuration.decryptionKeys = [try DecryptionKey(pem: decryptionKeyPEM)] }
        configuration.clock = FixedClock(now)
        return try SAMLResponseVerifier(configuration)
    }

    /// `xml` with one more Attribute, holding `content` in its AttributeValue, at the end of the
    /// AttributeStatement, and `declaring` added to the root element.
    static func insertingAttribute(_ xml: String, content: String, declaring: String = "") throws -> String {
        var text = xml
        let end = try range(of: "</saml:AttributeStatement>", in: text)
        text.insert(
            contentsOf: "<saml:Attribute Name=\"hostile\"><saml:AttributeValue>\(content)</saml:AttributeValue></saml:Attribute>",
            at: end.lowerBound)
        return declaring.isEmpty ? text : try Self.declaring(declaring, onRootOf: text)
    }

    static func declaring(_ declaration: String, onRootOf xml: String) throws -> String {
        var text = xml
        let root = try range(of: "<samlp:Response ", in: text)
        text.insert(contentsOf: declaration.dropFirst() + " ", at: root.upperBound)
        return text
    }

    static func attributeValue(_ name: String, in xml: String) throws -> String {
        let start = try range(of: " \(name)=\"", in: xml)
        guard let end = xml[start.upperBound...].firstIndex(of: "\"") else { throw missing(name) }
        return String(xml[start.upperBound..<end])
    }

    static func range(of text: String, in xml: String) throws -> Range<String.Index> {
        guard let found = xml.range(of: text) else { throw missing(text) }
        return found
    }

    static func missing(_ text: String) -> SAMLError {
        SAMLError(.configurationInvalid, "expected \(text) in the bundled vector a hostile shape is built from, found none")
    }
}
