// swift-tools-version: 6.1
// libFuzzer targets, their own package so that users of swift-saml never build them. They link only
// when built with the fuzzer sanitizer: run them through ../scripts/ci/fuzz (see ../docs/fuzzing.md).
import PackageDescription

let targets = [
    "FuzzDecoder", "FuzzVerify", "FuzzCanonicalization", "FuzzDecryption", "FuzzCookbook",
    "FuzzMVPDConfiguration", "FuzzPartnerFrameworkStatus", "FuzzMetadata", "FuzzCanonicalizationCost",
]

let package = Package(
    name: "swift-saml-fuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "swift-saml", path: "../")
    ],
    targets: [
        // Cost as coverage (libFuzzer's extra counters) for FuzzCanonicalizationCost.
        .target(name: "CFuzzCost"),
        .target(
            name: "FuzzSupport",
            dependencies: [
                .product(name: "SAML", package: "swift-saml"),
                .product(name: "AppleSSO", package: "swift-saml"),
            ]
        ),
    ]
        + targets.map { name in
            .executableTarget(
                name: name,
                dependencies: [
                    "FuzzSupport", "CFuzzCost",
                    .product(name: "SAML", package: "swift-saml"),
                    .product(name: "AppleSSO", package: "swift-saml"),
                ]
            )
        }
)
