// swift-tools-version: 6.1
// The server side that needs SwiftNIO: the PostgreSQL state store, the Token Exchange service (Hummingbird),
// the SAML-aware load harness and the `saml-server` tool. Its own package, beside the main one as
// Benchmarks/ is, so that a user of the verifier never builds SwiftNIO, Hummingbird or postgres-nio.
// Tests: `scripts/postgres/postgres-tests` from the repository root (starts a throw-away PostgreSQL server).
import PackageDescription

// The executables link Swift's runtime and Foundation into themselves on Linux, as
// `swift build --static-swift-stdlib` does, so that the binary `swift build -c release` makes is the one
// the container ships and the one benchmarked: it needs only the C libraries, and a login costs about 9%
// less CPU than with the shared Swift libraries (calls into the runtime without PLT stubs or
// `__tls_get_addr`; CHANGELOG.md). The modules are compiled against the shared libraries' module maps,
// which leave the static Foundation's C parts unnamed: they are named here. In debug too, so that CI's
// container check runs the build the tests made. Only the executables carry these flags: the test bundles
// and every library product link as before.
let staticSwiftRuntime: [LinkerSetting] = [
    .unsafeFlags(
        ["-static-stdlib", "-lCoreFoundation", "-l_FoundationCShims", "-l_FoundationCollections", "-l_FoundationICU"],
        .when(platforms: [.linux]))
]

let package = Package(
    name: "swift-saml-server",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "SAMLPostgres", targets: ["SAMLPostgres"]),
        .library(name: "SAMLService", targets: ["SAMLService"]),
        .library(name: "SAMLLoad", targets: ["SAMLLoad"]),
        // The content server's side of decisions/authorize: media tokens (JWS through jwt-kit), verified.
        .library(name: "SAMLMediaToken", targets: ["SAMLMediaToken"]),
        .executable(name: "saml-server", targets: ["SAMLServerCommand"]),
        .executable(name: "http-floor", targets: ["HTTPFloor"]),
    ],
    dependencies: [
        .package(name: "swift-saml", path: "../"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        // Already built for async-http-client; reads the trusted certificates' notAfter (KeyExpiry).
        .package(url: "https://github.com/apple/swift-certificates", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        // Hummingbird already builds it; the service reads its settings through it (JSON file, environment, command line).
        .package(url: "https://github.com/apple/swift-configuration", from: "1.4.0", traits: ["JSON", "CommandLineArguments"]),
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
        // OTLP/HTTP only: the gRPC exporter's packages are never built.
        .package(url: "https://github.com/swift-otel/swift-otel", from: "1.6.0", traits: ["OTLPHTTP"]),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.7.1"),
    ],
    targets: [
        // What HTTP/1.1 costs with SwiftNIO alone: the yardstick of scripts/bench/service-bench --floor.
        .executableTarget(
            name: "HTTPFloor",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "_SAMLBench", package: "swift-saml"),
            ],
            linkerSettings: staticSwiftRuntime
        ),
        .target(
            name: "SAMLPostgres",
            dependencies: [
                .product(name: "SAML", package: "swift-saml"),
                .product(name: "AppleSSO", package: "swift-saml"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "SAMLMediaToken",
            dependencies: [
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .target(
            name: "SAMLService",
            dependencies: [
                "SAMLPostgres",
                "SAMLMediaToken",
                .product(name: "SAML", package: "swift-saml"),
                .product(name: "AppleSSO", package: "swift-saml"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "OTel", package: "swift-otel"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]
        ),
        .target(
            name: "SAMLLoad",
            dependencies: [
                .product(name: "SAML", package: "swift-saml"),
                .product(name: "AppleSSO", package: "swift-saml"),
                .product(name: "_SAMLMockIdP", package: "swift-saml"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ]
        ),
        // Swift concurrency's global-executor hook, reached through the linker (GlobalExecutor.swift).
        .target(name: "CSAMLExecutor"),
        .executableTarget(
            name: "SAMLServerCommand",
            dependencies: [
                "CSAMLExecutor",
                "SAMLPostgres",
                "SAMLService",
                "SAMLLoad",
                .product(name: "SAML", package: "swift-saml"),
                .product(name: "AppleSSO", package: "swift-saml"),
                .product(name: "_SAMLMockIdP", package: "swift-saml"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            linkerSettings: staticSwiftRuntime
        ),
        .testTarget(
            name: "SAMLServiceTests",
            dependencies: [
                "SAMLService",
                "SAMLMediaToken",
                "SAMLLoad",
                "SAMLPostgres",
                .product(name: "SAML", package: "swift-saml"),
                .product(name: "AppleSSO", package: "swift-saml"),
                .product(name: "AppleSSOClient", package: "swift-saml"),
                .product(name: "_SAMLMockIdP", package: "swift-saml"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "_SAMLTestSupport", package: "swift-saml"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .testTarget(
            name: "SAMLPostgresTests",
            dependencies: [
                "SAMLPostgres",
                .product(name: "SAML", package: "swift-saml"),
                .product(name: "AppleSSO", package: "swift-saml"),
                .product(name: "_SAMLMockIdP", package: "swift-saml"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
    ]
)
