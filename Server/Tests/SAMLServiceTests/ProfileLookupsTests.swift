import AppleSSO
import Foundation
import SAML
import SAMLTestSupport
import Synchronization
import Testing

@testable import SAMLService

/// The profile reads anonymous callers cause on a shared store: cached per device, bounded in rate and
/// concurrency, shed at once beyond them.
@Suite("Profile reads of a shared store")
struct ProfileLookupsTests {
    /// A profile store that counts its reads and can hold them until released.
    final class CountingProfiles: ProfileStore, ProfilePresence, ProfileRemoval, SAMLStateStore {
        let profiles = InMemoryProfileStore()
        /// What the store's directory answers, by "device/mvpd" (nil: it cannot answer now).
        let directory = Mutex<Set<String>?>(nil)
        let replay = InMemoryStateStore()
        let reads = Atomic<Int>(0)
        let failing = Atomic<Bool>(false)
        let held = Mutex<[CheckedContinuation<Void, Never>]?>(nil)

        func save(_ profile: StoredProfile) async throws { try await profiles.save(profile) }
        func profiles(serviceProvider: String, device: String, now: SAMLInstant) async throws -> [StoredProfile] {
            reads.add(1, ordering: .relaxed)
            if held.withLock({ $0 != nil }) {
                await withCheckedContinuation { continuation in held.withLock { $0?.append(continuation) } }
            }
            if failing.load(ordering: .relaxed) { throw SAMLError(.storeUnavailable, "the test's store is down") }
            return try await profiles.profiles(serviceProvider: serviceProvider, device: device, now: now)
        }
        func hasLiveProfile(serviceProvider: String, device: String, mvpd: String, now: SAMLInstant) -> Bool? {
            directory.withLock { $0.map { $0.contains("\(device)/\(mvpd)") } }
        }
        func consume(request: IssuedRequestID?, assertion: UsedAssertion, now: SAMLInstant) async throws -> StateStoreOutcome {
            try await replay.consume(request: request, assertion: assertion, now: now)
        }
        let removals = Atomic<Int>(0)
        func removeProfiles(serviceProvider: String, device: String, mvpd: String?, now: SAMLInstant) async throws -> [String] {
            removals.add(1, ordering: .relaxed)
            return try await profiles.removeProfiles(serviceProvider: serviceProvider, device: device, mvpd: mvpd, now: now)
        }
        func removeProfiles(serviceProvider: String, mvpd: String, attribute: String, value: String) async throws -> Int {
            try await profiles.removeProfiles(serviceProvider: serviceProvider, mvpd: mvpd, attribute: attribute, value: value)
        }
        func release() {
            held.withLock {
                $0?.forEach { $0.resume() }; $0 = nil
            }
        }
    }

    static func profile(_ device: String, mvpd: String = "MVPD-A", validFor seconds: Int64 = 3600) -> StoredProfile {
        StoredProfile(
            serviceProvider: "REF30", device: device, mvpd: mvpd, json: Array(#"{"mvpd":"\#(mvpd)"}"#.utf8),
            notAfter: SystemClock().now() + .seconds(seconds))
    }

    static func lookups(_ store: CountingProfiles, perSecond: Int = 1000, concurrency: Int = 8, capacity: Int = 100)
        -> (ProfileLookups, ServiceMetrics)
    {
        let metrics = ServiceMetrics()
        let limits = ProfileLookups.Limits(perSecond: perSecond, concurrency: concurrency, knownCapacity: capacity)
        return (ProfileLookups(store: store, presence: store, limits: limits, metrics: metrics), metrics)
    }

    static func count(_ metrics: ServiceMetrics, _ source: String) -> Int {
        let line = String(decoding: metrics.exposition(), as: UTF8.self).split(separator: "\n")
            .first { $0.hasPrefix(#"saml_profile_lookups_total{source="\#(source)"}"#) }
        return line.flatMap { Int($0.split(separator: " ").last ?? "") } ?? 0
    }

    @Test(
        "a profile known here (kept here, or read before) answers sessions/sso from memory; no profile is never remembered; GET always reads"
    )
    func known() async throws {
        let store = CountingProfiles()
        let (lookups, metrics) = Self.lookups(store)
        let now = SystemClock().now()
        func has(_ device: String, _ mvpd: String = "MVPD-A", at instant: SAMLInstant = now) async throws -> Bool {
            try await lookups.hasProfile(serviceProvider: "REF30", device: device, mvpd: mvpd, now: instant)
        }
        // Unknown devices: read every time, nothing remembered, so a profile kept elsewhere is seen at once.
        #expect(try await has("d1") == false)
        #expect(try await has("d1") == false)
        #expect(store.reads.load(ordering: .relaxed) == 2 && lookups.knownProfiles == 0)
        let elsewhere = Self.profile("d1")
        try await store.save(elsewhere)
        #expect(try await has("d1"))
        #expect(store.reads.load(ordering: .relaxed) == 3)
        // Found by that read: known from now on.
        #expect(try await has("d1"))
        #expect(store.reads.load(ordering: .relaxed) == 3)
        // Kept by this instance: known without a read; another MVPD of the device is still read.
        let kept = Self.profile("d2", mvpd: "MVPD-B")
        try await store.save(kept)
        await lookups.kept(kept)
        #expect(try await has("d2", "MVPD-B"))
        #expect(try await has("d2", "MVPD-A") == false)
        #expect(store.reads.load(ordering: .relaxed) == 4)
        // Past its notAfter a known profile answers nothing (and the store, read, has none valid either).
        #expect(try await has("d2", "MVPD-B", at: now + .seconds(7200)) == false)
        // GET .../profiles reads the store every time: the full list, whatever is known here.
        #expect(try await lookups.profiles(serviceProvider: "REF30", device: "d2", now: now) == [kept])
        #expect(store.reads.load(ordering: .relaxed) == 6)
        #expect(Self.count(metrics, "memory") == 2 && Self.count(metrics, "store") == 6)
    }

    @Test("a store's directory answers sessions/sso yes and no without a read; when it cannot answer, the store is read")
    func directory() async throws {
        let store = CountingProfiles()
        let (lookups, metrics) = Self.lookups(store)
        func has(_ device: String, _ mvpd: String = "MVPD-A") async throws -> Bool {
            try await lookups.hasProfile(serviceProvider: "REF30", device: device, mvpd: mvpd, now: SystemClock().now())
        }
        try await store.save(Self.profile("d1"))
        store.directory.withLock { $0 = ["d1/MVPD-A"] }
        #expect(try await has("d1"))
        #expect(try await has("d2") == false)
        #expect(try await has("d1", "MVPD-B") == false)
        #expect(store.reads.load(ordering: .relaxed) == 0 && Self.count(metrics, "directory") == 3)
        // Not in step (loading, the database away): read, bounded as before.
        store.directory.withLock { $0 = nil }
        #expect(try await has("d1"))
        #expect(store.reads.load(ordering: .relaxed) == 1 && Self.count(metrics, "store") == 1)
        // GET .../profiles needs the profiles themselves: always read.
        store.directory.withLock { $0 = [] }
        #expect(try await lookups.profiles(serviceProvider: "REF30", device: "d1", now: SystemClock().now()).count == 1)
        #expect(store.reads.load(ordering: .relaxed) == 2)
    }

    @Test("beyond the rate, reads are shed at once and counted; the bucket refills with time")
    func rate() async throws {
        let store = CountingProfiles()
        let (lookups, metrics) = Self.lookups(store, perSecond: 10)
        var shed = 0
        for index in 0..<200 {
            do {
                _ = try await lookups.profiles(serviceProvider: "REF30", device: "flood-\(index)", now: SystemClock().now())
            } catch is ProfileLookups.Shed {
                shed += 1
            }
        }
        // One second's reads at most (and a little refill while the loop ran).
        let reads = store.reads.load(ordering: .relaxed)
        #expect(reads >= 10 && reads <= 13, "\(reads) reads reached the store")
        #expect(shed == 200 - reads && Self.count(metrics, "shed") == shed)
        try await Task.sleep(for: .milliseconds(300))
        _ = try await lookups.profiles(serviceProvider: "REF30", device: "after", now: SystemClock().now())
        #expect(store.reads.load(ordering: .relaxed) == reads + 1)
    }

    @Test("beyond the concurrency, a read is shed at once while the others wait on a slow store; none are left in flight")
    func concurrency() async throws {
        let store = CountingProfiles()
        store.held.withLock { $0 = [] }
        let (lookups, _) = Self.lookups(store, concurrency: 2)
        let waiting = (0..<2).map { index in
            Task { try await lookups.profiles(serviceProvider: "REF30", device: "slow-\(index)", now: SystemClock().now()) }
        }
        while store.reads.load(ordering: .relaxed) < 2 { try await Task.sleep(for: .milliseconds(10)) }
        await #expect(throws: ProfileLookups.Shed.self) {
            try await lookups.profiles(serviceProvider: "REF30", device: "third", now: SystemClock().now())
        }
        store.release()
        for task in waiting { #expect(try await task.value.isEmpty) }
        // Both slots are free again.
        _ = try await lookups.profiles(serviceProvider: "REF30", device: "fourth", now: SystemClock().now())
        _ = try await lookups.profiles(serviceProvider: "REF30", device: "fifth", now: SystemClock().now())
        #expect(store.reads.load(ordering: .relaxed) == 4)
    }

    @Test("a store that fails: the error goes on, is counted, and is not cached")
    func failure() async throws {
        let store = CountingProfiles()
        let (lookups, metrics) = Self.lookups(store)
        store.failing.store(true, ordering: .relaxed)
        await #expect(throws: SAMLError.self) {
            try await lookups.profiles(serviceProvider: "REF30", device: "d", now: SystemClock().now())
        }
        store.failing.store(false, ordering: .relaxed)
        #expect(try await lookups.profiles(serviceProvider: "REF30", device: "d", now: SystemClock().now()).isEmpty)
        #expect(store.reads.load(ordering: .relaxed) == 2 && Self.count(metrics, "error") == 1)
    }

    @Test("what is known here holds at most its capacity, however many profiles are read or kept")
    func capacity() async throws {
        let store = CountingProfiles()
        let (lookups, _) = Self.lookups(store, perSecond: 100_000, capacity: 50)
        for index in 0..<500 {
            let read = Self.profile("read-\(index)")
            try await store.save(read)
            #expect(
                try await lookups.hasProfile(serviceProvider: "REF30", device: "read-\(index)", mvpd: "MVPD-A", now: SystemClock().now()))
            await lookups.kept(Self.profile("kept-\(index)", validFor: 7200))
            #expect(lookups.knownProfiles <= 50)
        }
        #expect(store.reads.load(ordering: .relaxed) == 500)
    }

    @Test(
        "the service: a sessions/sso flood of unknown devices reaches the shared store at its rate and leaves nothing; a login's next sessions/sso is answered from memory"
    )
    func service() async throws {
        let store = CountingProfiles()
        var configuration = Service.configuration()
        configuration.profileLookupsPerSecond = 5
        let metrics = ServiceMetrics()
        try await Service.with(configuration, store: store, metrics: metrics) { port in
            let started = ContinuousClock.now
            for _ in 0..<100 {
                let answer = Service.json(
                    try await Service.session(port, Service.pfs("ProviderB").headerValue, device: Service.newDevice()))
                #expect(answer["actionName"] as? String == "partner_profile")
            }
            let reads = store.reads.load(ordering: .relaxed)
            // A second's reads at the start, then 5 a second while the flood lasted.
            let elapsed = ContinuousClock.now - started
            let allowed = 5 + Int(elapsed / .seconds(1) * 5) + 1
            #expect(reads >= 5 && reads <= allowed && reads < 100, "\(reads) reads reached the store in \(elapsed)")
            #expect(Self.count(metrics, "shed") == 100 - reads)
            #expect(try await Service.send(port, "/metrics", method: "GET").text.contains(#"saml_profile_lookups_total{source="shed"}"#))
            let device = Service.newDevice()
            #expect(try await Service.send(port, try await Service.freshExchange(port, Service.mvpdB, device: device)).status == 201)
            let before = store.reads.load(ordering: .relaxed)
            let again = Service.json(try await Service.session(port, Service.pfs("ProviderB").headerValue, device: device))
            #expect(again["reasonType"] as? String == "authenticatedSSO")
            #expect(store.reads.load(ordering: .relaxed) == before)
            // GET profiles beyond the rate: 503 with Retry-After, never an empty map.
            try await Task.sleep(for: .seconds(1))
            var statuses: [Int: Int] = [:]
            for _ in 0..<60 {
                let answer = try await Service.send(
                    port, "/api/v2/REF30/profiles", method: "GET",
                    headers: [("AP-Device-Identifier", "fingerprint \(Service.newDevice())"), ("Authorization", "Bearer token")])
                statuses[answer.status, default: 0] += 1
                if answer.status == 503 { #expect(answer.header("Retry-After") == "1") }
            }
            #expect((statuses[200] ?? 0) >= 5 && (statuses[503] ?? 0) > 0 && statuses.keys.sorted() == [200, 503])
        }
    }

    @Test(
        "decisions and logouts of devices the directory knows have no profile: decisions read nothing, logouts reach the shared store at the reads' rate (503 beyond), a known device's at once"
    )
    func decisionsAndLogouts() async throws {
        let store = CountingProfiles()
        store.directory.withLock { $0 = [] }
        var configuration = Service.configuration()
        configuration.profileLookupsPerSecond = 5
        try await Service.with(configuration, store: store) { port in
            let headers = [("Authorization", "Bearer token"), ("Content-Type", "application/json")]
            for _ in 0..<50 {
                let answer = try await Service.send(
                    port, "/api/v2/REF30/decisions/preauthorize/MVPD-B",
                    headers: headers + [("AP-Device-Identifier", "fingerprint \(Service.newDevice())")],
                    body: Array(#"{"resources": ["a"]}"#.utf8))
                #expect(answer.status == 403)
            }
            #expect(store.reads.load(ordering: .relaxed) == 0)
            try await Task.sleep(for: .seconds(1))
            let started = ContinuousClock.now
            var statuses: [Int: Int] = [:]
            for _ in 0..<60 {
                let answer = try await Service.send(
                    port, "/api/v2/REF30/logout?redirectUrl=https%3A%2F%2Fapp.example", method: "GET",
                    headers: [("AP-Device-Identifier", "fingerprint \(Service.newDevice())"), ("Authorization", "Bearer token")])
                statuses[answer.status, default: 0] += 1
            }
            let removals = store.removals.load(ordering: .relaxed)
            let allowed = 5 + Int((ContinuousClock.now - started) / .seconds(1) * 5) + 1
            #expect(removals >= 5 && removals <= allowed && statuses[503] == 60 - removals, "\(removals) removals, \(statuses)")
            // A device the directory knows: removed whatever the bucket holds.
            let device = "fingerprint \(Service.newDevice())"
            store.directory.withLock { $0 = ["\(device)/MVPD-B"] }
            try await store.save(Self.profile(device, mvpd: "MVPD-B"))
            let known = try await Service.send(
                port, "/api/v2/REF30/logout/MVPD-B?redirectUrl=https%3A%2F%2Fapp.example", method: "GET",
                headers: [("AP-Device-Identifier", device), ("Authorization", "Bearer token")])
            #expect(known.status == 200 && known.text.contains("partner_logout"))
        }
    }

    @Test("the file's profileLookupsPerSecond and profileLookupConcurrency; below 1 is refused")
    func configured() async throws {
        let directory = try TemporaryFiles.folder("lookups")
        let path = directory.appendingPathComponent("service.json").path
        func load(_ extra: String) async throws -> ServiceConfiguration {
            try Data(#"{"serviceProvider": "REF30", "mvpdConfiguration": "m.json", "trust": "t.json"\#(extra)}"#.utf8)
                .write(to: URL(fileURLWithPath: path))
            return try await ServiceConfiguration.load(contentsOf: path, environment: [:])
        }
        let defaults = try await load("")
        #expect(defaults.profileLookupsPerSecond == 1000 && defaults.profileLookupConcurrency == 8)
        let set = try await load(#", "profileLookupsPerSecond": 50, "profileLookupConcurrency": 2"#)
        #expect(set.profileLookupsPerSecond == 50 && set.profileLookupConcurrency == 2)
        await #expect(throws: SAMLError.self) { try await load(#", "profileLookupsPerSecond": 0"#) }
        await #expect(throws: SAMLError.self) { try await load(#", "profileLookupConcurrency": -1"#) }
    }
}
