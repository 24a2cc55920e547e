internal import CSAMLShim

extension UnsafeMutablePointer where Pointee == xmlNode {
    /// Declares on this element every namespace its subtree uses but does not declare itself (declared
    /// on an ancestor, or on the element a fragment was parsed in), with the same prefix and URI, and
    /// points those uses at the new declarations. The subtree then stands alone: it can replace its
    /// container, outlive it, or be copied to a document of its own without libxml2 inventing prefixes
    /// (`default`, `default1`, ...) for namespaces it can no longer find by prefix.
    ///
    /// A decrypted plaintext is parsed in the namespace context of the encrypted element it replaces, so
    /// its nodes point at declarations of that element and its ancestors; the container is then freed.
    /// Only the namespaces the subtree uses are declared, so nothing else from outside the ciphertext
    /// reaches what a canonicalisation of the subtree renders. The `xml` namespace belongs to the
    /// document and is left as it is.
    ///
    /// - Throws: ``SAMLError/Code/decryptionFailed`` when libxml2 cannot allocate a declaration.
    func declareInheritedNamespaces() throws {
        var declaredInside = Set<xmlNsPtr>()
        var redeclared: [xmlNsPtr: xmlNsPtr] = [:]
        var failed = false
        func own(_ ns: xmlNsPtr?) -> xmlNsPtr? {
            guard let ns, !declaredInside.contains(ns) else { return ns }
            if let prefix = ns.pointee.prefix, XMLName.equals(prefix, "xml") { return ns }
            if let done = redeclared[ns] { return done }
            let made = declaration(matching: ns)
            if made == nil { failed = true }
            redeclared[ns] = made
            return made ?? ns
        }
        forEachElement { element in
            var ns = element.pointee.nsDef
            while let current = ns {
                declaredInside.insert(current)
                ns = current.pointee.next
            }
            element.pointee.ns = own(element.pointee.ns)
            var attribute = element.pointee.properties
            while let current = attribute {
                current.pointee.ns = own(current.pointee.ns)
                attribute = current.pointee.next
            }
            return !failed
        }
        if failed {
            throw SAMLError(
                .decryptionFailed,
                "expected to declare the namespaces the decrypted element inherits on it, could not (memory or a prefix bound twice)")
        }
    }

    /// A declaration on this element with the prefix and URI of `outer`: a new one, or the one already
    /// here; nil should this element bind that prefix to another URI, which a parsed subtree never does
    /// (its uses would point at this element's own declaration).
    private func declaration(matching outer: xmlNsPtr) -> xmlNsPtr? {
        let href = outer.pointee.href
        let prefix = outer.pointee.prefix
        var ns = pointee.nsDef
        while let current = ns {
            if xmlStrEqual(current.pointee.prefix, prefix) != 0 {
                return xmlStrEqual(current.pointee.href, href) != 0 ? current : nil
            }
            ns = current.pointee.next
        }
        return xmlNewNs(self, href, prefix)
    }
}
