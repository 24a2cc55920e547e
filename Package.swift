// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "swift-saml",
    platforms: [.macOS(.v13)],
    products: [
        .library(name: "SAML", targets: ["SAML"]),
        .library(name: "AppleSSO", targets: ["AppleSSO"]),
        .executable(name: "saml", targets: ["SAMLCommand"]),
        // For the benchmark package and `saml bench`: the measured pipeline and the C baseline.
        .library(name: "SAMLBenchmarking", targets: ["SAMLBench"]),
        // A mock MVPD that signs responses, for load tests and integration tests.
        .library(name: "SAMLMockIdP", targets: ["SAMLMockIdP"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        // System libraries. Their headers are only ever reached through CSAMLShim, whose header restates
        // the pkg-config -D flags that SwiftPM drops (see docs/xmlsec-abi.md).
        .systemLibrary(
            name: "CLibXML2",
            pkgConfig: "libxml-2.0",
            providers: [.apt(["libxml2-dev"]), .brew(["libxml2"])]
        ),
        .systemLibrary(
            name: "CXMLSec",
            pkgConfig: "xmlsec1-openssl",
            providers: [.apt(["libxmlsec1-dev", "libssl-dev"]), .brew(["libxmlsec1"])]
        ),
        .target(
            name: "CSAMLShim",
            dependencies: ["CLibXML2", "CXMLSec"]
        ),
        .target(
            name: "SAML",
            dependencies: ["CSAMLShim", .product(name: "Logging", package: "swift-log")]
        ),
        .target(
            name: "AppleSSO",
            dependencies: ["SAML"]
        ),
        .target(
            name: "SAMLMockIdP",
            dependencies: ["SAML", "CSAMLShim"]
        ),
        .target(
            name: "CSAMLBaseline",
            dependencies: ["CSAMLShim"]
        ),
        .target(
            name: "SAMLBench",
            dependencies: ["SAML", "CSAMLBaseline"]
        ),
        .executableTarget(
            name: "SAMLCommand",
            dependencies: [
                "SAML",
                "AppleSSO",
                "SAMLBench",
                "SAMLMockIdP",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(
            name: "SAMLTests",
            dependencies: ["SAML", "CSAMLShim"]
        ),
        // Verification tests use Foundation (JSON manifests), so they stay apart from the C-level tests.
        .testTarget(
            name: "SAMLVerifierTests",
            dependencies: ["SAML", "SAMLMockIdP", "AppleSSO"]
        ),
        .testTarget(
            name: "AppleSSOTests",
            dependencies: ["AppleSSO", "SAML", "SAMLMockIdP"]
        ),
        // Runs the built `saml` executable; the dependency makes sure it is built first.
        .testTarget(
            name: "SAMLCommandTests",
            dependencies: ["SAMLCommand"]
        ),
    ]
)
