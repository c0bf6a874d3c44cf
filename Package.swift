// swift-tools-version:6.0
import PackageDescription

// libaspects.so is preloaded into arbitrary programs, so it must not drag the Swift runtime
// along. SwiftPM links dynamic products through swiftc, which adds libswiftCore, a toolchain
// RUNPATH and swiftrt.o; the Embedded feature flag turns that link into a plain `clang -shared`
// (docs/ARCHITECTURE.md §2). A test checks the resulting NEEDED list.
let plainCLink: [LinkerSetting] = [
    .unsafeFlags(["-enable-experimental-feature", "Embedded"]),
]

// SwiftPM also gives it a RUNPATH of $ORIGIN, which would make the loader look for the
// preload's dependencies beside it in every advised process; this linker drops it (the script
// says how, LibraryShapeTests checks).
let noOriginRunpath: [LinkerSetting] = [
    .unsafeFlags(["-use-ld=\(Context.packageDirectory)/scripts/link-without-origin"]),
]

let package = Package(
    name: "aspects",
    products: [
        .library(name: "aspects", type: .dynamic, targets: ["CPreload"]),
        .library(name: "AspectConfig", targets: ["AspectConfig"]),
        // For tests of other packages: typed rules, runs, live tables; builds libaspects.so
        // itself where it is a dependency (SwiftPM does not build CPreload there).
        .library(name: "AspectsTesting", targets: ["AspectsTesting"]),
        // For advice written in Swift: a typed Invocation over aspects_advice.h, for a dynamic
        // library of @_cdecl functions that a rule's "call" names (config/examples/advice-swift).
        // It links no part of the preload: libaspects.so provides the C API in the process.
        .library(name: "AspectsAdvice", targets: ["AspectsAdvice"]),
        .executable(name: "aspectctl", targets: ["aspectctl"]),
        .executable(name: "aspects-gen", targets: ["aspects-gen"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        // THE table layout, shared by the C preload and the Swift writer.
        .target(name: "CAspectsABI"),
        .target(
            name: "CPreload",
            dependencies: ["CAspectsABI"],
            // -gdwarf-4: valgrind 3.19 (the benchmarks' callgrind) cannot read clang's DWARF 5.
            // One folder per layer of base.h; a file includes another's header by its name.
            cSettings: [.unsafeFlags(["-O2", "-fvisibility=hidden", "-gdwarf-4"])]
                + ["os", "rules", "originals", "events", "dispatch", "install", "."].map { .headerSearchPath($0) },
            linkerSettings: [.linkedLibrary("dl"), .unsafeFlags(["-Xlinker", "--version-script=\(Context.packageDirectory)/Sources/CPreload/generated/exports.map"])] + plainCLink + noOriginRunpath
        ),
        // The Swift side in layers, each on those above it (ModuleStructureTests holds the
        // allowed arrows): errors, JSON and the system; the catalog, prototypes and rules; the
        // shared-memory table and the preflight checks beside each other; explore on top.
        .target(name: "AspectsCore", dependencies: ["CAspectsABI"]),
        .target(name: "AspectsRules", dependencies: ["AspectsCore", "CAspectsABI"]),
        .target(name: "AspectsTable", dependencies: ["AspectsRules", "AspectsCore", "CAspectsABI"]),
        .target(name: "AspectsPreflight", dependencies: ["AspectsRules", "AspectsCore", "CAspectsABI"]),
        // The system zlib: explore's symbolizer inflates compressed debug sections (gcc -gz, Debian's debug files).
        .systemLibrary(name: "CZlib"),
        .target(
            name: "AspectsExplore",
            dependencies: ["AspectsTable", "AspectsPreflight", "AspectsRules", "AspectsCore", "CAspectsABI", "CZlib"]
        ),
        // Build-time only: the parsers and generators of config/*.spec, for aspects-gen and the tests.
        .target(name: "AspectsCodegen", dependencies: ["AspectsRules", "AspectsCore", "CAspectsABI"]),
        // The library before the split, re-exporting the layers for one release.
        .target(
            name: "AspectConfig",
            dependencies: ["AspectsExplore", "AspectsTable", "AspectsPreflight", "AspectsRules", "AspectsCore"]
        ),
        .target(
            name: "AspectsTesting",
            dependencies: ["AspectsTable", "AspectsRules", "AspectsCore", "CAspectsABI"]
        ),
        // aspects_advice.h (a link to CPreload's) and the version symbol of Swift advice.
        .target(name: "CAspectsAdvice"),
        .target(name: "AspectsAdvice", dependencies: ["CAspectsAdvice"]),
        .executableTarget(
            name: "aspectctl",
            dependencies: [
                "AspectsExplore", "AspectsTable", "AspectsPreflight", "AspectsRules", "AspectsCore", "CAspectsABI",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // The generated files: the catalog's, and the man pages (docs/man).
        .executableTarget(name: "aspects-gen", dependencies: ["AspectsCodegen", "AspectsRules", "AspectsCore"]),
        .testTarget(
            name: "AspectsTests",
            dependencies: [
                "AspectsCore", "AspectsRules", "AspectsTable", "AspectsPreflight", "AspectsExplore", "AspectsCodegen",
                "AspectConfig", "AspectsTesting", "aspectctl", "aspects-gen", "CAspectsABI",
            ]
        ),
    ]
)
