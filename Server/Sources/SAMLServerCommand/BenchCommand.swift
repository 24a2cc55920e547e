import AppleSSO
import ArgumentParser
import Foundation
import SAML
import SAMLMockIdP
import SAMLPostgres
import SAMLService

/// `saml-server bench`: the cost of shared state, in one run: verifications per second and latency
/// percentiles with the in-memory store and with PostgreSQL (two instances, each its own pool).
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench", abstract: "Verifications/s and latency (p50, p99) with the in-memory store beside PostgreSQL, two instances.")

    @Option(help: "The PostgreSQL store (postgres://...).") var store: String
    @Option(help: "Responses per store.") var count: Int = 5000
    @Option(help: "Concurrent verifications.") var concurrency: Int = 8
    @Option(help: "The TestVectors folder (for the mock MVPD's key).") var vectors: String = "TestVectors"

    func run() async throws {
        let provider = try MockIdentityProvider(
            privateKeyPEM: try read("\(vectors)/keys/ecdsa-p256.key.pem"), certificatePEM: try read("\(vectors)/keys/ecdsa-p256.cert.pem"))
        let idp = try IdentityProvider(
            entityID: MockIdentityProvider.Template().issuer, keys: try TrustedKey.all(pem: try read("\(vectors)/keys/ecdsa-p256.cert.pem"))
        )
        print("| store | instances | verifications/s | p50 µs | p99 µs |")
        print("|---|---:|---:|---:|---:|")
        let memory = InMemoryStateStore()
        try await measure("in-memory", stores: [memory], provider: provider, idp: idp)
        var configuration = try PostgresStateStore.Configuration(url: store)
        configuration.maximumConnections = concurrency
        let a = PostgresStateStore(configuration), b = PostgresStateStore(configuration)
        let tasks = [Task { await a.run() }, Task { await b.run() }]
        defer { tasks.forEach { $0.cancel() } }
        try await a.prepare()
        try await measure("PostgreSQL", stores: [a, b], provider: provider, idp: idp)
    }

    func measure(_ name: String, stores: [any SAMLStateStore], provider: MockIdentityProvider, idp: IdentityProvider) async throws {
        // Generation (signing) first, outside the timed phase.
        var responses: [(xml: [UInt8], request: String)] = []
        for _ in 0..<count {
            let request = try SAMLRequest(issuer: "https://saml.sp.auth.adobe.com", destination: "https://idp.mvpd.example.com/sso")
            var template = MockIdentityProvider.Template()
            template.inResponseTo = request.id
            responses.append((try provider.response(template, issuedAt: .now(), placement: .assertion), request.id))
        }
        let verifiers = try stores.map { store in
            var configuration = SAMLResponseVerifier.Configuration(
                identityProvider: idp, audience: .equals(MockIdentityProvider.Template().audience), destination: .skip,
                inResponseTo: .skip, replay: .store(store))
            configuration.maximumAge = nil
            return try SAMLResponseVerifier(configuration)
        }
        let all = responses
        let clock = ContinuousClock()
        let start = clock.now
        let latencies = try await withThrowingTaskGroup(of: [Duration].self) { group in
            for worker in 0..<concurrency {
                group.addTask {
                    var latencies: [Duration] = []
                    for index in stride(from: worker, to: all.count, by: concurrency) {
                        let began = clock.now
                        _ = try await verifiers[index % verifiers.count].verify(
                            all[index].xml, expecting: .init(inResponseTo: all[index].request))
                        latencies.append(clock.now - began)
                    }
                    return latencies
                }
            }
            var latencies: [Duration] = []
            for try await part in group { latencies += part }
            return latencies.sorted()
        }
        let elapsed = clock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        func micros(_ q: Double) -> Int {
            let d = latencies[min(latencies.count - 1, Int(Double(latencies.count) * q))]
            return Int(d.components.seconds * 1_000_000 + d.components.attoseconds / 1_000_000_000_000)
        }
        print("| \(name) | \(verifiers.count) | \(Int(Double(count) / seconds)) | \(micros(0.5)) | \(micros(0.99)) |")
    }
}
