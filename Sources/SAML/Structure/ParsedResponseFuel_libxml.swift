internal import CSAMLShim

@_spi(Stages)
extension ParsedResponse {
    /// The canonicalisation fuel the document has spent so far and its tank's limit (c14n_budget.c): one
    /// tank for every canonicalisation of the document, whatever the signatures, keys and trials. For the
    /// benchmarks, the cost-seeking fuzz target and the tests.
    public var canonicalizationFuel: (spent: UInt64, limit: UInt64) {
        (saml_c14n_tank_spent(tree.document), saml_c14n_tank_limit(tree.document))
    }
}
