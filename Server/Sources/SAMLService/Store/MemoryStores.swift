import AppleSSO
import SAML
import SAMLPostgres

/// How full one kind of the in-memory store is.
struct StoreOccupancy: Sendable {
    /// `assertions`, `requests`, `profiles`, or with PostgreSQL `profile-directory` (its capacity 0 once
    /// it has turned itself off).
    let kind: String
    let entries: Int
    let capacity: Int
}

/// The in-memory stores of an instance on the `memory` store: their occupancy for the gauges (read at
/// each scrape) and readiness, and their sizing, logged at start-up; with PostgreSQL, the occupancy of
/// its profile directory.
struct MemoryStores: Sendable {
    let state: InMemoryStateStore?
    let profiles: InMemoryProfileStore?
    /// The longest an entry is kept: the maximum age plus the clock skew for an assertion, the request's
    /// lifetime for an answered request.
    var retention: Duration = .seconds(780)
    /// With PostgreSQL: the store whose profile directory is reported.
    var database: PostgresStateStore?

    /// About what an entry of ``SAML/InMemoryStateStore`` takes (measured: docs/service.md, "The in-memory
    /// store"), for the sizing line.
    static let bytesPerEntry = 100
    /// From this share of its capacity, a kind is reported `near-full` by `/health/ready`.
    static let nearFull = 0.9

    var occupancy: [StoreOccupancy] {
        var kinds: [StoreOccupancy] = []
        if let state {
            let counts = state.counts
            kinds.append(StoreOccupancy(kind: "assertions", entries: counts.usedAssertions, capacity: state.capacity))
            kinds.append(StoreOccupancy(kind: "requests", entries: counts.answeredRequests, capacity: state.capacity))
        }
        if let profiles { kinds.append(StoreOccupancy(kind: "profiles", entries: profiles.count, capacity: profiles.capacity)) }
        if let directory = database?.profileDirectoryOccupancy {
            kinds.append(StoreOccupancy(kind: "profile-directory", entries: directory.entries, capacity: directory.capacity))
        }
        return kinds
    }

    /// What `/health/ready` says of the kinds that guard logins (assertions and requests; profiles make
    /// room for themselves): `full` (every login refused: out of rotation) or `near-full`.
    var readiness: [String: String] {
        var status: [String: String] = [:]
        for kind in occupancy where kind.kind == "assertions" || kind.kind == "requests" {
            if kind.entries >= kind.capacity {
                status[kind.kind] = "full"
            } else if Double(kind.entries) >= Double(kind.capacity) * Self.nearFull {
                status[kind.kind] = "near-full"
            }
        }
        return status
    }

    /// The sizing, for the start-up log line.
    var sizing: [String: String] {
        guard let state else { return [:] }
        let full = 2 * state.capacity * Self.bytesPerEntry
        let seconds = max(1, retention.components.seconds)
        return [
            "retention_seconds": "\(seconds)", "sustained_logins_per_second": "\(Int64(state.capacity) / seconds)",
            "capacity.assertions": "\(state.capacity)", "capacity.requests": "\(state.capacity)",
            "capacity.profiles": "\(profiles?.capacity ?? 0)", "bytes_per_entry": "\(Self.bytesPerEntry)",
            "memory_when_full_mib": "\(full >> 20)",
        ]
    }
}
