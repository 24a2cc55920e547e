// swift-tools-version: 6.1
// Two small programs that use swift-saml as a package of your own would (README, "Use it from your
// package"): `swift run verify-vector` and `swift run two-mvpd-exchange`, from this folder. CI builds and
// runs both.
import PackageDescription

let package = Package(
    name: "swift-saml-examples",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "verify-vector", targets: ["VerifyVector"]),
        .executable(name: "two-mvpd-exchange", targets: ["TwoMVPDExchange"]),
    ],
    dependencies: [
        .package(name: "swift-saml", path: "../")
    ],
    targets: [
        .executableTarget(
            name: "VerifyVector",
            dependencies: [.product(name: "SAML", package: "swift-saml")],
            path: "Sources/VerifyVector"
        ),
        .executableTarget(
            name: "TwoMVPDExchange",
            dependencies: [
                .product(name: "SAML", package: "swift-saml"),
                .product(name: "AppleSSO", package: "swift-saml"),
                .product(name: "_SAMLMockIdP", package: "swift-saml"),
            ],
            path: "Sources/TwoMVPDExchange"
        ),
    ]
)
