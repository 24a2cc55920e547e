// swift-tools-version: 6.1
// The server side that needs SwiftNIO: the PostgreSQL state store (and the `saml-server` tool). Its own
// package, beside the main one as Benchmarks/ is, so that a user of the verifier never builds SwiftNIO or
// postgres-nio. Tests: `scripts/postgres-tests` from the repository root (starts a throw-away server).
import PackageDescription

let package = Package(
    name: "swift-saml-server",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "SAMLPostgres", targets: ["SAMLPostgres"]),
        .executable(name: "saml-server", targets: ["SAMLServerCommand"]),
    ],
    dependencies: [
        .package(name: "swift-saml", path: "../"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        .target(
            name: "SAMLPostgres",
            dependencies: [
                .product(name: "SAML", package: "swift-saml"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "SAMLServerCommand",
            dependencies: [
                "SAMLPostgres",
                .product(name: "SAML", package: "swift-saml"),
                .product(name: "AppleSSO", package: "swift-saml"),
                .product(name: "SAMLMockIdP", package: "swift-saml"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(
            name: "SAMLPostgresTests",
            dependencies: [
                "SAMLPostgres",
                .product(name: "SAML", package: "swift-saml"),
                .product(name: "SAMLMockIdP", package: "swift-saml"),
            ]
        ),
    ]
)
