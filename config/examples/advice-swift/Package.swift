// swift-tools-version:6.0
// A Swift advice library: `swift build -c release` makes .build/release/libWriteSizes.so, which
// write-sizes.json names. It depends on aspects for the AspectsAdvice product only (a typed
// Invocation over aspects_advice.h); the preload is not linked into it.
import PackageDescription

let package = Package(
    name: "advice-swift",
    products: [
        .library(name: "WriteSizes", type: .dynamic, targets: ["WriteSizes"]),
    ],
    dependencies: [
        // this repository; elsewhere: .package(url: "https://…/aspects", from: "0.1.0")
        .package(name: "aspects", path: "../../.."),
    ],
    targets: [
        .target(name: "WriteSizes", dependencies: [.product(name: "AspectsAdvice", package: "aspects")]),
    ]
)
