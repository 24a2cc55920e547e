internal import CSAMLShim

/// Compares the package's canonicaliser (canonicalizer.c) with libxml2's `xmlC14NExecute` on a document, in
/// every mode:
/// for the tests and the fuzz target that prove them byte for byte identical.
@_spi(Stages)
public enum CanonicalizationComparison {
    /// What comparing the two on every shape of one document found.
    public struct Report: Sendable {
        /// Shapes both canonicalised to the same bytes.
        public var same = 0
        /// Shapes the engine refused (something canonical XML is not written for as libxml2 writes it).
        public var declined = 0
        /// Shapes where the bytes differ, or one side failed: `"<path> excluding <path> prefixes [...]"`.
        public var differences: [String] = []

        public init() {}
    }

    /// Every element as the apex (with `signedShapesOnly`, only those a SAML signature canonicalises:
    /// elements with an `ID` attribute and `ds:SignedInfo`), in exclusive C14N: alone, with each child
    /// element excluded, with an InclusiveNamespaces prefix list (`#default`, every prefix declared in the
    /// document, both), with and without comments; in inclusive C14N 1.0 and 1.1: alone with and without
    /// comments, and with each child element excluded.
    public static func compareEveryElement(
        _ xml: UnsafeRawBufferPointer, limits: XMLParserLimits = XMLParserLimits(), signedShapesOnly: Bool = false
    ) throws -> Report {
        let tree = try SafeXMLParser.parse(xml, limits: limits)
        var declared: Set<String> = []
        tree.root.forEachElement { element in
            var ns = element.pointee.nsDef
            while let current = ns {
                if let prefix = current.pointee.prefix { declared.insert(String(cString: prefix)) }
                ns = current.pointee.next
            }
            return true
        }
        let everyPrefix = declared.sorted().joined(separator: " ")
        let prefixLists: [String?] = [nil, "#default", everyPrefix, "#default " + everyPrefix]
        var report = Report()
        func compare(
            _ apex: xmlNodePtr, _ excluded: xmlNodePtr?, _ prefixes: String?, _ comments: Bool,
            _ mode: saml_shim_c14n_mode = SAML_SHIM_C14N_EXCLUSIVE
        ) {
            switch saml_shim_c14n_compare(tree.document, apex, excluded, mode, prefixes, comments ? 1 : 0) {
            case SAML_SHIM_C14N_SAME: report.same += 1
            case SAML_SHIM_C14N_DECLINED: report.declined += 1
            default:
                report.differences.append(
                    "\(apex.elementPath) excluding \(excluded?.elementPath ?? "nothing") prefixes [\(prefixes ?? "none")]"
                        + (comments ? " with comments" : "") + (mode == SAML_SHIM_C14N_EXCLUSIVE ? "" : " inclusive \(mode.rawValue)"))
            }
        }
        tree.root.forEachElement { apex in
            if signedShapesOnly && apex.attributeNode("ID") == nil && !apex.is(Namespace.xmlDSig, "SignedInfo") {
                return true
            }
            for (index, prefixes) in prefixLists.enumerated() {
                compare(apex, nil, prefixes, index % 2 == 1)
            }
            for child in apex.elementChildren {
                compare(apex, child, nil, false)
            }
            for mode in [SAML_SHIM_C14N_INCLUSIVE_1_0, SAML_SHIM_C14N_INCLUSIVE_1_1] {
                compare(apex, nil, nil, false, mode)
                compare(apex, nil, nil, true, mode)
                for child in apex.elementChildren {
                    compare(apex, child, nil, false, mode)
                }
            }
            return true
        }
        return report
    }
}
