import AppleSSO
import Benchmark
import Foundation
import SAML
import SAMLTestSupport

// Normalise, encode and decode throughput on 4 KiB, 64 KiB and 1 MiB pretty-printed SAML responses,
// each beside the Adobe Pass cookbook's own Foundation code on the same input (the baseline).
// Throughput is inputs per second; allocation counts are deterministic and checked as thresholds.

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.throughput, .wallClock, .mallocCountTotal, .peakMemoryResident],
        maxDuration: .seconds(2),
        maxIterations: 100_000,
        thresholds: [.mallocCountTotal: .init(relative: [.p50: 5.0])]
    )

    for (label, size) in [("4KiB", 4 << 10), ("64KiB", 64 << 10), ("1MiB", 1 << 20)] {
        let text = Inputs.prettyPrintedResponse(bytes: size)
        let bytes = Array(text.utf8)
        let encoded = Cookbook.encode(text)
        let decoder = SAMLResponseDecoder(options: Inputs.decoderOptions)

        Benchmark("normalize:\(label)") { benchmark in
            for _ in benchmark.scaledIterations { blackHole(try Cookbook.normalize(utf8: bytes)) }
        }
        Benchmark("normalize:\(label):foundation-cookbook") { benchmark in
            for _ in benchmark.scaledIterations { blackHole(CookbookOracle.normalize(text)) }
        }
        Benchmark("encode:\(label)") { benchmark in
            for _ in benchmark.scaledIterations { blackHole(try Cookbook.encode(utf8: bytes)) }
        }
        Benchmark("encode:\(label):string") { benchmark in
            for _ in benchmark.scaledIterations { blackHole(Cookbook.encode(text)) }
        }
        Benchmark("encode:\(label):foundation-cookbook") { benchmark in
            for _ in benchmark.scaledIterations { blackHole(CookbookOracle.encode(text)) }
        }
        Benchmark("decode:\(label)") { benchmark in
            for _ in benchmark.scaledIterations { blackHole(try decoder.decode(encoded)) }
        }
        Benchmark("decode:\(label):foundation") { benchmark in
            for _ in benchmark.scaledIterations { blackHole(FoundationCookbook.decode(encoded)) }
        }
    }
}

enum Inputs {
    static var decoderOptions: SAMLResponseDecoder.Options {
        var options = SAMLResponseDecoder.Options()
        options.maximumDecodedBytes = 4 << 20
        options.maximumInputBytes = 16 << 20
        return options
    }

    /// An MVPD-shaped, pretty-printed response, its AttributeStatement repeated up to `bytes`.
    static func prettyPrintedResponse(bytes: Int) -> String {
        let head = """
            <?xml version="1.0" encoding="UTF-8"?>
            <samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" ID="_r1" Version="2.0">
                <saml:Issuer xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion">
                    https://idp.mvpd.example.com
                </saml:Issuer>

            """
        let attribute = """
                    <saml:Attribute Name="channelId">
                        <saml:AttributeValue>espn\t\thbo</saml:AttributeValue>
                        <saml:AttributeValue>Grüße 😀</saml:AttributeValue>
                    </saml:Attribute>\r

            """
        let tail = "</samlp:Response>\n"
        var text = head
        while text.utf8.count + attribute.utf8.count + tail.utf8.count <= bytes { text += attribute }
        return text + tail
    }
}

/// A Foundation decoder, beside the library's (the cookbook's own encoding code is ``CookbookOracle``).
enum FoundationCookbook {
    static func decode(_ value: String) -> Data? {
        value.removingPercentEncoding.flatMap { Data(base64Encoded: $0) }
    }
}
