import Foundation

/// `TestVectors/exchange/cases.json`: responses from MVPD A's and B's identity providers, each posted as
/// A, B or an MVPD without trust, with the verdict, status and code each must get.
public struct ExchangeCases: Decodable, Sendable {
    public struct Case: Decodable, Sendable {
        public var response, from, postedAs, providerID, expect: String
        public var status: Int
        public var code: String?
    }

    public var now, audience, inResponseTo: String
    public var cases: [Case]

    /// The cases of the `TestVectors` folder at `vectors`.
    public static func load(vectors: URL) throws -> ExchangeCases {
        try JSONDecoder().decode(ExchangeCases.self, from: Data(contentsOf: vectors.appendingPathComponent("exchange/cases.json")))
    }
}
