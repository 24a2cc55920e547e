// swift-tools-version: 6.1
// The benchmarks are their own package so that users of swift-saml never build the benchmark dependency.
// Run from this folder: `swift package benchmark` (see ../BENCHMARKS.md).
import PackageDescription

let package = Package(
    name: "swift-saml-benchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        // Named explicitly: a path dependency otherwise takes its identity from the folder name.
        .package(name: "swift-saml", path: "../"),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "CodecBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "AppleSSO", package: "swift-saml"),
                .product(name: "SAML", package: "swift-saml"),
                .product(name: "_SAMLTestSupport", package: "swift-saml"),
            ],
            path: "Benchmarks/CodecBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "PipelineBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "SAML", package: "swift-saml"),
                .product(name: "_SAMLBench", package: "swift-saml"),
            ],
            path: "Benchmarks/PipelineBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ]
)
