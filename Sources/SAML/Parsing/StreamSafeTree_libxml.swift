internal import CSAMLShim

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The parsed tree's text is stream-safe as the verifier reads it.
///
/// The pre-scan (``XMLPreScan``) checks the bytes as written, where a character reference (`&#836;`) is
/// ASCII and markup splits text; but libxml2 decodes the references, and the verifier joins a node's
/// text and CDATA children into one string (with their comments and processing instructions too, in
/// one reader), skipping child elements (``Text/concatenated(_:textOnly:)``). So runs of non-starters are
/// counted again here, over every sibling list's contents both ways and every attribute's value, as they
/// will be joined (a comment holding a letter splits one join's runs and not the other's): 21,000 pairs
/// of marks written as references in a Response's Issuer cost 1.6 s of CPU at its first `==` before.
/// One walk of the tree, ASCII eight bytes at a time; only for a document whose bytes hold a non-starter
/// or a character reference (``XMLPreScan/check(_:limits:depth:namespacesInScope:)`` says which): the
/// text of any other is ASCII or starters as written (a typical response: 1.7% of a verification's
/// instructions saved).
enum StreamSafeTree {
    /// Throws `xml.limit-exceeded` when a joined text of the nodes from `first` on (and of everything
    /// under them) holds more than 30 non-starters in a row.
    static func check(_ first: xmlNodePtr?) throws {
        var lists: [xmlNodePtr] = []
        if let first { lists.append(first) }
        var seen = 0
        while let list = lists.popLast() {
            // Two joins of a list: text and CDATA only (`textOnly`), and every node's content, comments and
            // processing instructions included. A comment's letters end a run of the second, never of the first.
            var textRun = 0
            var contentRun = 0
            var node: xmlNodePtr? = list
            while let current = node {
                node = current.pointee.next
                let type = current.pointee.type
                if type == XML_ELEMENT_NODE {
                    // Its own lists: its children, and each attribute's value (text nodes).
                    if let children = current.pointee.children { lists.append(children) }
                    var attribute = current.pointee.properties
                    while let present = attribute {
                        if let value = present.pointee.children { lists.append(value) }
                        attribute = present.pointee.next
                    }
                    // Namespace names, references decoded (attribute values libxml2 keeps apart).
                    var declaration = current.pointee.nsDef
                    while let present = declaration {
                        if let href = present.pointee.href {
                            var run = 0
                            let bytes = UnsafeBufferPointer(start: UnsafePointer(href), count: strlen(href))
                            if StreamSafeText.firstViolation(bytes, continuing: &run, nonStarters: &seen) != nil {
                                throw exceeded(at: current)
                            }
                        }
                        declaration = present.pointee.next
                    }
                    continue
                }
                guard let content = current.pointee.content else { continue }
                let bytes = UnsafeBufferPointer(start: UnsafePointer(content), count: strlen(content))
                let isText = type == XML_TEXT_NODE || type == XML_CDATA_SECTION_NODE
                if StreamSafeText.firstViolation(bytes, continuing: &contentRun, nonStarters: &seen) != nil
                    || (isText && StreamSafeText.firstViolation(bytes, continuing: &textRun, nonStarters: &seen) != nil)
                {
                    throw exceeded(at: current)
                }
            }
        }
    }

    private static func exceeded(at node: xmlNodePtr) -> SAMLError {
        SAMLError(
            .xmlLimitExceeded,
            "expected at most \(StreamSafeText.maximumNonStarters) non-starters (combining characters) in a row in text as read (character references decoded, across markup), found more at line \(xmlGetLineNo(node))"
        )
    }
}
