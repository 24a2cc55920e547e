import Synchronization

/// The bearer tokens of the API and of the admin listener, as SHA-256 digests (compared in constant
/// time, ``BearerToken``): replaced as a whole when their files are read again
/// (``TokenExchangeService/reload()``), so that a rotation needs no restart: put the new token beside
/// the old one, reload, move the clients, remove the old one, reload.
final class Credentials: Sendable {
    private let state: Mutex<(bearer: [[UInt8]], admin: [[UInt8]])>

    init(bearer: [String], admin: [String]) {
        state = Mutex((Self.digests(bearer), Self.digests(admin)))
    }

    var bearer: [[UInt8]] { state.withLock { $0.bearer } }
    var admin: [[UInt8]] { state.withLock { $0.admin } }

    func replace(bearer: [String]? = nil, admin: [String]? = nil) {
        state.withLock { state in
            if let bearer { state.bearer = Self.digests(bearer) }
            if let admin { state.admin = Self.digests(admin) }
        }
    }

    /// Whether an `Authorization` header carries one of the admin tokens as last read.
    func admitsAdmin(_ authorization: String?) -> Bool {
        guard let authorization, let token = BearerToken.credentials(in: authorization) else { return false }
        return BearerToken.matches(token, admin)
    }

    private static func digests(_ tokens: [String]) -> [[UInt8]] {
        tokens.map { BearerToken.digest(Array($0.utf8)) }
    }
}
