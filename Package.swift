// swift-tools-version: 6.1
import PackageDescription

/// SAML_BUILD_COMMIT, when it is a commit (hexadecimal digits, at most 40).
let buildCommit = Context.environment["SAML_BUILD_COMMIT"].flatMap { commit in
    commit.count <= 40 && !commit.isEmpty && commit.allSatisfy(\.isHexDigit) ? commit : nil
}

let package = Package(
    name: "swift-saml",
    // iOS and tvOS for the app's client (AppleSSOClient): the verifier's libraries are not built there.
    platforms: [.macOS(.v15), .iOS(.v16), .tvOS(.v16)],
    products: [
        .library(name: "SAML", targets: ["SAML"]),
        .library(name: "AppleSSO", targets: ["AppleSSO"]),
        // The app's side (a tvOS/iOS app walking the cookbooks): Foundation only, neither libxml2 nor
        // libxmlsec1 nor SwiftNIO.
        .library(name: "AppleSSOClient", targets: ["AppleSSOClient"]),
        .executable(name: "saml", targets: ["SAMLCommand"]),
        // Not API (the underscore, as swift-certificates' `_CertificateInternals`): products this
        // repository's other packages use, which may change in any release. The benchmark package's and
        // `saml bench`'s measured pipeline and C baseline; a mock MVPD that signs responses, for load and
        // integration tests; the helpers the tests of every package share (the cookbook's own code as an
        // oracle, a seeded generator, a capturing log handler, the exchange cases).
        .library(name: "_SAMLBench", targets: ["SAMLBench"]),
        .library(name: "_SAMLMockIdP", targets: ["SAMLMockIdP"]),
        .library(name: "_SAMLTestSupport", targets: ["SAMLTestSupport"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // The tracing API only (no exporter, no SwiftNIO): spans go to whatever tracer the caller configures.
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
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
        // The canonicalisation engine (libxml2 only): exclusive C14N byte for byte libxml2's, and the
        // work budget of every canonicalisation. CSAMLShim installs it into libxmlsec1's transforms.
        .target(
            name: "CSAMLCanonical",
            dependencies: ["CLibXML2"]
        ),
        .target(
            name: "CSAMLShim",
            dependencies: ["CLibXML2", "CXMLSec", "CSAMLCanonical"]
        ),
        // The commit a build was made from, for --version: SAML_BUILD_COMMIT in the environment of the build
        // (scripts/ci/release, the Dockerfile); only this file recompiles when it changes.
        .target(
            name: "CSAMLBuildInfo",
            cSettings: buildCommit.map { [.define("SAML_BUILD_COMMIT", to: "\"\($0)\"")] }
        ),
        // The cookbook's client-side encoding and the Base64 under it, with no dependency: shared by the
        // verifier, the backend module and the app's client.
        .target(name: "CookbookEncoding"),
        .target(
            name: "SAML",
            dependencies: [
                "CSAMLShim", "CSAMLBuildInfo", "CookbookEncoding", .product(name: "Logging", package: "swift-log"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]
        ),
        .target(
            name: "AppleSSO",
            dependencies: ["SAML", "CookbookEncoding"]
        ),
        .target(
            name: "AppleSSOClient",
            dependencies: ["CookbookEncoding"]
        ),
        // The mock IdP's signing and encryption C, apart from the shim the verifier uses.
        .target(
            name: "CSAMLMockShim",
            dependencies: ["CSAMLShim"]
        ),
        .target(
            name: "SAMLMockIdP",
            dependencies: ["SAML", "CSAMLShim", "CSAMLMockShim"]
        ),
        .target(
            name: "CSAMLBaseline",
            dependencies: ["CSAMLShim"]
        ),
        .target(
            name: "SAMLBench",
            dependencies: ["SAML", "AppleSSO", "SAMLMockIdP", "CSAMLBaseline"]
        ),
        // Allocation-failure injection (docs/fuzzing.md): a test executable; no product links it.
        .target(
            name: "CSAMLFaultInjection",
            dependencies: ["CLibXML2", "CXMLSec"]
        ),
        .executableTarget(
            name: "SAMLFaultInjection",
            dependencies: ["SAML", "AppleSSO", "CSAMLFaultInjection"]
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
        .target(
            name: "SAMLTestSupport",
            dependencies: [.product(name: "Logging", package: "swift-log")],
            path: "Tests/SAMLTestSupport"
        ),
        .testTarget(
            name: "SAMLTests",
            dependencies: ["SAML", "CSAMLShim", "CookbookEncoding"]
        ),
        // Verification tests use Foundation (JSON manifests), so they stay apart from the C-level tests.
        .testTarget(
            name: "SAMLVerifierTests",
            dependencies: [
                "SAML", "SAMLMockIdP", "SAMLBench", "AppleSSO", "SAMLTestSupport", .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
            ],
            // Inputs the fuzzers found, read from the source tree by FuzzRegressionTests (not resources).
            exclude: ["FuzzFindings"]
        ),
        .testTarget(
            name: "AppleSSOTests",
            dependencies: ["AppleSSO", "SAML", "SAMLMockIdP", "SAMLTestSupport", "AppleSSOClient"]
        ),
        // Compiles every code block of README.md and the DocC catalogues as written (Snippets/, generated
        // by scripts/ci/doc-snippets, one file per block), and checks that the generated files are current.
        .testTarget(
            name: "DocumentationTests",
            dependencies: ["SAML", "AppleSSO", "AppleSSOClient", .product(name: "Logging", package: "swift-log")]
        ),
        // Runs the built `saml` executable; the dependency makes sure it is built first.
        .testTarget(
            name: "SAMLCommandTests",
            dependencies: ["SAMLCommand", "SAMLBench", "SAML", "SAMLTestSupport"]
        ),
    ]
)

// The DocC catalogues' builder (scripts/ci/docs), only when asked for: a user of the package never resolves it.
if Context.environment["SAML_DOCC"] == "1" {
    package.dependencies.append(.package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"))
}
