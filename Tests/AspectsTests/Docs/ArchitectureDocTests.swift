import Foundation
import Testing

/// docs/ARCHITECTURE.md stays current: every repository path it names exists, and every file
/// of the preload it lists is there (and every one there is listed).
@Suite struct ArchitectureDocTests {
    static let text = (try? String(contentsOfFile: Paths.root + "/docs/ARCHITECTURE.md", encoding: .utf8)) ?? ""

    @Test func everyPathItNamesExists() {
        let roots = ["Sources/", "Tests/", "config/", "scripts/", "Fuzz/", "python/", "docs/", "Benchmarks/", ".ci/"]
        let named = Self.text.matches(of: #/`([A-Za-z0-9_.\-/]+)`/#).map { String($0.1) }
            .filter { p in roots.contains { p.hasPrefix($0) } }
            .map { $0.split(separator: " ").first.map(String.init) ?? $0 }
        #expect(named.count > 10, "\(named)")
        for path in Set(named) {
            let clean = path.hasSuffix("/") ? String(path.dropLast()) : path
            #expect(FileManager.default.fileExists(atPath: Paths.root + "/" + clean), "docs/ARCHITECTURE.md names \(path), which does not exist")
        }
    }

    /// docs/layout.md's table names every directory at the top of the repository and every
    /// target in Sources/, and every path it names exists.
    @Test(.tags(.fast)) func theLayoutPageIsComplete() throws {
        let table = try String(contentsOfFile: Paths.root + "/docs/layout.md", encoding: .utf8)
        let rows = table.split(separator: "\n").filter { $0.hasPrefix("| `") }.compactMap { $0.split(separator: "`").dropFirst().first.map(String.init) }
        let fm = FileManager.default
        let top = try fm.contentsOfDirectory(atPath: Paths.root).filter { name in
            var dir: ObjCBool = false
            return fm.fileExists(atPath: Paths.root + "/" + name, isDirectory: &dir) && dir.boolValue && (!name.hasPrefix(".") || name == ".ci")
        }
        let targets = try fm.contentsOfDirectory(atPath: Paths.root + "/Sources").map { "Sources/" + $0 }
        for dir in top + targets {
            #expect(rows.contains { $0 == dir || $0.hasPrefix(dir + "/") }, "docs/layout.md does not name \(dir)")
        }
        for row in rows where !row.contains("*") {
            #expect(fm.fileExists(atPath: Paths.root + "/" + row), "docs/layout.md names \(row), which does not exist")
        }
    }

    @Test(.tags(.fast)) func thePreloadsFilesAreAllListed() throws {
        let row = try #require(Self.text.split(separator: "\n").first { $0.hasPrefix("| `Sources/CPreload` |") })
        let listed = Set(row.matches(of: #/`([a-z_0-9]+\.[ch])`/#).map { String($0.1) })
        let fm = FileManager.default
        let folders = [".", "stubs"] + Paths.preloadLayers
        let present = Set(try folders.flatMap { try fm.contentsOfDirectory(atPath: Paths.root + "/Sources/CPreload/" + $0) }
            .filter { $0.hasSuffix(".c") || $0.hasSuffix(".h") })
        // every folder of the preload is a layer the row names (or stubs/, generated/, include/)
        let dirs = try fm.contentsOfDirectory(atPath: Paths.root + "/Sources/CPreload").filter { !$0.contains(".") }
        #expect(Set(dirs) == Set(Paths.preloadLayers + ["stubs", "generated", "include"]), "\(dirs.sorted())")
        for layer in Paths.preloadLayers { #expect(row.contains("`\(layer)/`"), "the row does not name the folder \(layer)/") }
        #expect(listed.subtracting(present).isEmpty, "listed but gone: \(listed.subtracting(present))")
        #expect(present.subtracting(listed).subtracting(["catalog.h"]).isEmpty, "there but not listed: \(present.subtracting(listed))")
    }

    /// The layers of base.h call only downwards: no file of a layer folder includes a header of
    /// a higher one (os/ < rules/ < originals/ < events/ < dispatch/ < install/; the root's files are on top).
    @Test(.tags(.fast)) func thePreloadsLayersIncludeOnlyDownwards() throws {
        let fm = FileManager.default
        var layerOf: [String: Int] = [:]
        for (rank, layer) in Paths.preloadLayers.enumerated() {
            for f in try fm.contentsOfDirectory(atPath: Paths.root + "/Sources/CPreload/" + layer) { layerOf[f] = rank }
        }
        var upward: [String] = []
        for (rank, layer) in Paths.preloadLayers.enumerated() {
            for f in try fm.contentsOfDirectory(atPath: Paths.root + "/Sources/CPreload/" + layer) {
                let text = try String(contentsOfFile: Paths.root + "/Sources/CPreload/\(layer)/\(f)", encoding: .utf8)
                for m in text.matches(of: #/#include "([^"/]+)"/#) {
                    let header = String(m.1)
                    if let to = layerOf[header], to > rank { upward.append("\(layer)/\(f) -> \(Paths.preloadLayers[to])/\(header)") }
                }
            }
        }
        #expect(upward.isEmpty, "includes that run back up: \(upward)")
    }
}
