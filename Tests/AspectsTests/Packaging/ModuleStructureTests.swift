import Foundation
import Testing

/// The Swift side stays in layers: Package.swift's arrows and every file's imports follow the
/// layering below, the code generators reach no product, and no source reaches into a module's
/// internals with `@testable`.
@Suite(.tags(.fast)) struct ModuleStructureTests {
    /// The architecture: each Swift target and the targets it may depend on. A layer depends
    /// only on those above it, never on one beside it; AspectsCodegen is build-time only.
    static let layering: [String: Set<String>] = [
        "AspectsCore": ["CAspectsABI"],
        "AspectsRules": ["AspectsCore", "CAspectsABI"],
        "AspectsTable": ["AspectsRules", "AspectsCore", "CAspectsABI"],
        "AspectsPreflight": ["AspectsRules", "AspectsCore", "CAspectsABI"],
        // CZlib: the system zlib, for the symbolizer's compressed debug sections
        "AspectsExplore": ["AspectsTable", "AspectsPreflight", "AspectsRules", "AspectsCore", "CAspectsABI", "CZlib"],
        "AspectsCodegen": ["AspectsRules", "AspectsCore", "CAspectsABI"],
        // the re-export of the layers kept for one release
        "AspectConfig": ["AspectsExplore", "AspectsTable", "AspectsPreflight", "AspectsRules", "AspectsCore"],
        "AspectsTesting": ["AspectsTable", "AspectsRules", "AspectsCore", "CAspectsABI"],
        "AspectsAdvice": ["CAspectsAdvice"],
        "aspectctl": ["AspectsExplore", "AspectsTable", "AspectsPreflight", "AspectsRules", "AspectsCore",
                      "CAspectsABI", "ArgumentParser"],
        "aspects-gen": ["AspectsCodegen", "AspectsRules", "AspectsCore"],
    ]
    /// Targets outside the Swift layering: the C layers (their own test keeps them downward)
    /// and the tests, which may use every layer.
    static let outsideLayering: Set<String> = ["CAspectsABI", "CPreload", "CAspectsAdvice", "AspectsTests"]
    /// Modules that are no target of this package.
    static let systemModules: Set<String> = ["Foundation", "Glibc", "Musl", "Testing", "Dispatch"]

    struct Target {
        var name: String
        var dependencies: [String]
        var directory: String
    }

    /// Package.swift's targets and their dependencies (a product's name for a `.product`).
    static func targets() throws -> [Target] {
        let text = try String(contentsOfFile: Paths.root + "/Package.swift", encoding: .utf8)
        var out: [Target] = []
        for m in text.matches(of: #/\.(?:target|executableTarget|testTarget)\(\s*name:\s*"([^"]+)"/#) {
            let name = String(m.1)
            var dependencies: [String] = []
            let rest = text[m.range.upperBound...]
            // the arguments of this target: up to its closing parenthesis
            var depth = 1, end = rest.startIndex
            while end < rest.endIndex, depth > 0 {
                if rest[end] == "(" { depth += 1 } else if rest[end] == ")" { depth -= 1 }
                end = rest.index(after: end)
            }
            let arguments = rest[..<end]
            if let d = arguments.firstMatch(of: #/dependencies:\s*\[((?:[^\[\]]|\[[^\[\]]*\])*)\]/#) {
                dependencies = d.1.matches(of: #/(?:\.product\(name:\s*)?"([^"]+)"(?:,\s*package:\s*"[^"]+"\))?/#).map { String($0.1) }
            }
            let directory = m.0.contains("testTarget") ? "Tests/" + name : "Sources/" + name
            out.append(Target(name: name, dependencies: dependencies, directory: directory))
        }
        return out
    }

    /// Every Swift file under `directory` with the modules it imports.
    static func imports(under directory: String) throws -> [(file: String, module: String, line: String)] {
        let root = Paths.root + "/" + directory
        guard let walker = FileManager.default.enumerator(atPath: root) else { return [] }
        var out: [(file: String, module: String, line: String)] = []
        for case let file as String in walker where file.hasSuffix(".swift") {
            let text = try String(contentsOfFile: root + "/" + file, encoding: .utf8)
            for line in text.split(separator: "\n") {
                guard let m = line.firstMatch(of: #/^(?:@\w+\s+)*import\s+(?:(?:struct|class|enum|protocol|func|var|let|typealias)\s+)?(\w+)/#)
                else { continue }
                out.append((directory + "/" + file, String(m.1), String(line)))
            }
        }
        return out
    }

    /// The name a target's module is imported by.
    static func moduleName(_ target: String) -> String { target.replacingOccurrences(of: "-", with: "_") }

    @Test func packageSwiftFollowsTheLayering() throws {
        let targets = try Self.targets()
        #expect(targets.count >= Self.layering.count, "Package.swift was not read: \(targets.map(\.name))")
        for t in targets where !Self.outsideLayering.contains(t.name) {
            guard let allowed = Self.layering[t.name] else {
                Issue.record("Package.swift: target \(t.name) is not in ModuleStructureTests.layering; give it its place there")
                continue
            }
            for d in t.dependencies where !allowed.contains(d) {
                Issue.record("Package.swift: \(t.name) → \(d) is an arrow the layering does not allow (\(t.name) may depend on \(allowed.sorted()))")
            }
        }
    }

    @Test func everyImportIsADeclaredDependency() throws {
        let targets = try Self.targets()
        let ours = Dictionary(uniqueKeysWithValues: targets.map { (Self.moduleName($0.name), $0.name) })
        #expect(ours["AspectsCore"] != nil && ours["aspects_gen"] != nil, "\(ours.keys.sorted())")
        for t in targets {
            let declared = Set(t.dependencies.map(Self.moduleName))
            for i in try Self.imports(under: t.directory) where !Self.systemModules.contains(i.module) {
                let known = ours[i.module] != nil || t.dependencies.contains(i.module)
                if !declared.contains(i.module) {
                    Issue.record("\(i.file): \(t.name) → \(i.module) (`\(i.line)`) \(known ? "is not a dependency Package.swift declares for \(t.name)" : "is no module this package knows")")
                }
            }
        }
    }

    @Test func onlyTheGeneratorImportsTheCodegenModule() throws {
        for t in try Self.targets() where t.name != "aspects-gen" && t.name != "AspectsTests" {
            if t.dependencies.contains("AspectsCodegen") {
                Issue.record("Package.swift: \(t.name) → AspectsCodegen; only aspects-gen and the tests may use the build-time generators")
            }
            for i in try Self.imports(under: t.directory) where i.module == "AspectsCodegen" {
                Issue.record("\(i.file): \(t.name) → AspectsCodegen; only aspects-gen and the tests may import it")
            }
        }
    }

    @Test func noSourceUsesTestableImport() throws {
        for t in try Self.targets() where !t.directory.hasPrefix("Tests/") {
            for i in try Self.imports(under: t.directory) where i.line.contains("@testable") {
                Issue.record("\(i.file): `\(i.line)`: only tests may see a module's internals")
            }
        }
    }
}
