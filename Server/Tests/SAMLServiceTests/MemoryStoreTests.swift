import Foundation
import SAML
import SAMLTestSupport
import Testing

@testable import SAMLService

/// The in-memory store as an operator sees it: its capacity from the configuration, its occupancy as
/// gauges, readiness when it is near full or full, and a full store failing closed with its own code.
@Suite("The in-memory store in the service")
struct MemoryStoreTests {
    @Test("capacity from the configuration; gauges, readiness and a counter as it fills; full, logins fail closed")
    func fillingUp() async throws {
        var configuration = Service.configuration()
        configuration.memoryStoreCapacity = 10
        let metrics = ServiceMetrics()
        try await Service.with(configuration, metrics: metrics) { port in
            for _ in 0..<9 {
                #expect(try await Service.send(port, try await Service.freshExchange(port, Service.mvpdA)).status == 201)
            }
            let nearFull = try await Service.send(port, "/health/ready", method: "GET")
            #expect(nearFull.status == 200)
            #expect((Service.json(nearFull)["store"] as? [String: String]) == ["assertions": "near-full", "requests": "near-full"])
            #expect(try await Service.send(port, try await Service.freshExchange(port, Service.mvpdA)).status == 201)
            let exposition = try await Service.send(port, "/metrics", method: "GET").text
            #expect(exposition.contains(#"saml_store_entries{kind="assertions"} 10"#))
            #expect(exposition.contains(#"saml_store_capacity{kind="assertions"} 10"#))
            #expect(exposition.contains(#"saml_store_capacity{kind="profiles"} 100000"#))

            let refused = try await Service.send(port, try await Service.freshExchange(port, Service.mvpdA))
            #expect(refused.status == 503)
            #expect(Service.detailCode(refused) == "replay.cache-full")
            let full = try await Service.send(port, "/health/ready", method: "GET")
            #expect(full.status == 503)
            #expect((Service.json(full)["store"] as? [String: String])?["assertions"] == "full")
            // The answered request is checked first: its kind is the one reported full.
            #expect(try await Service.send(port, "/metrics", method: "GET").text.contains(#"saml_store_full_total{kind="requests"} 1"#))
        }
    }

    @Test("the file's memoryStoreCapacity, memoryProfileCapacity, maximumAgeSeconds and clockSkewSeconds; out of range is refused")
    func configured() async throws {
        let directory = try TemporaryFiles.folder("memory")
        let path = directory.appendingPathComponent("service.json").path
        func write(_ extra: String) throws {
            try Data(
                #"{"serviceProvider": "REF30", "mvpdConfiguration": "m.json", "trust": "t.json"\#(extra)}"#.utf8
            ).write(to: URL(fileURLWithPath: path))
        }
        try write(#", "memoryStoreCapacity": 5000000, "memoryProfileCapacity": 2000, "maximumAgeSeconds": 60, "clockSkewSeconds": 5"#)
        let configuration = try await ServiceConfiguration.load(contentsOf: path, environment: [:])
        #expect(configuration.memoryStoreCapacity == 5_000_000 && configuration.memoryProfileCapacity == 2000)
        #expect(configuration.maximumAge == .seconds(60) && configuration.clockSkew == .seconds(5))
        try write(#", "clockSkewSeconds": -1"#)
        await #expect(throws: SAMLError.self) { try await ServiceConfiguration.load(contentsOf: path, environment: [:]) }
        try write(#", "memoryStoreCapacity": 0"#)
        await #expect(throws: SAMLError.self) { try await ServiceConfiguration.load(contentsOf: path, environment: [:]) }
        #expect(ServiceConfiguration(serviceProvider: "x", mvpdConfigurationPath: "m", trustPath: "t").memoryStoreCapacity == 3_000_000)
    }
}
