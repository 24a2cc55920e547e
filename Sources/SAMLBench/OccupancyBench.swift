import Dispatch
import Foundation
import SAML
import SAMLMockIdP

#if canImport(Glibc)
    import Glibc
#endif

/// CPU per login with the in-memory store at several occupancies, in one run: each login is a whole
/// verification (parse, signature, validation) and the store's consume, on fresh responses signed by the
/// mock MVPD (ECDSA P-256) ahead of the timed phase. Each occupancy has its own ``SAML/InMemoryStateStore``,
/// filled with live entries first; rounds alternate the occupancies so that the machine's drift hits
/// each alike.
public enum OccupancyBench {
    /// What one entry of a filled store takes: the resident memory it added over the entries filled
    /// (assertion IDs only; an answered request takes as much), from the largest fill of the last run.
    public nonisolated(unsafe) static var bytesPerEntry: Double = 0

    public struct Row: Sendable {
        /// The share of the capacity asked for (the store is filled to it, or short of it by the logins of
        /// every round, which then fill it up).
        public var occupancy: Double
        /// CPU (user + system) per login, the median of the rounds.
        public var microsecondsPerLogin: Double
        /// Each round's figure.
        public var rounds: [Double]
    }

    /// - Parameters:
    ///   - vectors: the TestVectors folder (the mock MVPD's ECDSA key).
    ///   - capacity: each store's capacity.
    ///   - logins: logins per occupancy and round.
    public static func run(
        vectors: String, occupancies: [Double] = [0, 0.5, 0.99], capacity: Int = 1_000_000, logins: Int = 3000, rounds: Int = 5
    ) throws -> [Row] {
        let key = Array(try Data(contentsOf: URL(fileURLWithPath: "\(vectors)/keys/ecdsa-p256.key.pem")))
        let certificate = Array(try Data(contentsOf: URL(fileURLWithPath: "\(vectors)/keys/ecdsa-p256.cert.pem")))
        let provider = try MockIdentityProvider(privateKeyPEM: key, certificatePEM: certificate)
        let template = MockIdentityProvider.Template()
        let issued = SAMLInstant.now()
        let identityProvider = try IdentityProvider(entityID: template.issuer, keys: TrustedKey.all(pem: certificate))
        let stores = occupancies.map { _ in InMemoryStateStore(capacity: capacity) }
        for (store, occupancy) in zip(stores, occupancies) {
            // Filled so that the last round's logins still fit: the top occupancy runs up to full.
            let count = min(Int(Double(capacity) * occupancy), capacity - rounds * logins)
            let before = residentBytes()
            defer { if count > 0 { bytesPerEntry = Double(residentBytes() - before) / Double(count) } }
            try wait {
                for index in 0..<count {
                    let filler = UsedAssertion(issuer: template.issuer, id: "filler-\(index)", expiry: issued + .seconds(3600))
                    _ = try await store.consume(request: nil, assertion: filler, now: issued)
                }
            }
        }
        var measured = Array(repeating: [Double](), count: occupancies.count)
        for _ in 0..<rounds {
            for (index, store) in stores.enumerated() {
                let responses = try (0..<logins).map { _ in try provider.response(template, issuedAt: issued, placement: .assertion) }
                var configuration = SAMLResponseVerifier.Configuration(
                    identityProvider: identityProvider, audience: .equals(template.audience), destination: .skip, inResponseTo: .skip,
                    replay: .store(store, unsolicited: .allow))
                configuration.clock = FixedClock(issued + .seconds(1))
                let verifier = try SAMLResponseVerifier(configuration)
                let started = cpuMicroseconds()
                try wait {
                    for response in responses { _ = try await verifier.verify(response) }
                }
                measured[index].append((cpuMicroseconds() - started) / Double(logins))
            }
        }
        return zip(occupancies, measured).map { occupancy, rounds in
            Row(occupancy: occupancy, microsecondsPerLogin: rounds.sorted()[rounds.count / 2], rounds: rounds)
        }
    }

    /// The process's resident memory (Linux: /proc/self/statm), in bytes.
    static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8),
            let pages = text.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
        else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// The process's CPU time (user and system), in microseconds.
    static func cpuMicroseconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        let user = Double(usage.ru_utime.tv_sec) * 1e6 + Double(usage.ru_utime.tv_usec)
        let system = Double(usage.ru_stime.tv_sec) * 1e6 + Double(usage.ru_stime.tv_usec)
        return user + system
    }

    /// Runs `body` to its end from synchronous code (the benchmark's thread waits; the work runs on the
    /// concurrency pool).
    private static func wait(_ body: @escaping @Sendable () async throws -> Void) throws {
        let done = DispatchSemaphore(value: 0)
        let failure = Locked<(any Error)?>(nil)
        Task {
            do { try await body() } catch { failure.withLock { $0 = error } }
            done.signal()
        }
        done.wait()
        if let error = failure.withLock({ $0 }) { throw error }
    }
}
