/// A parsed response whose structure was checked, between the stages of ``SAMLResponseVerifier``.
///
/// Exposed only as SPI (`@_spi(Stages) import SAML`) for the benchmarks, which time each stage. Owns its
/// libxml2 tree; not `Sendable` (one verification uses it, on one thread).
@_spi(Stages)
public struct ParsedResponse {
    let tree: XMLTree
    let structure: DocumentStructure
    /// No newline, carriage return or tab byte anywhere: what the Adobe Pass cookbook's normalisation
    /// leaves (and what recovery requires before it tries anything).
    let cookbookShaped: Bool
}
