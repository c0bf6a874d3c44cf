import Foundation
import Testing
@testable import AspectConfig

/// The committed outputs of aspects-gen must equal what the catalog spec generates now.
/// ASPECTS_REGENERATE=1 rewrites them (and fails on purpose, so the run is never mistaken for a pass).
@Suite struct GeneratedFilesTests {
    @Test func generatedFilesAreFresh() throws {
        let spec = try String(contentsOfFile: Paths.root + "/config/catalog.spec", encoding: .utf8)
        let codegen = try CatalogCodegen(specText: spec)
        let regenerate = ProcessInfo.processInfo.environment["ASPECTS_REGENERATE"] == "1"
        for (path, contents) in codegen.outputs() {
            let full = Paths.root + "/" + path
            let current = try? String(contentsOfFile: full, encoding: .utf8)
            if regenerate {
                try contents.write(toFile: full, atomically: true, encoding: .utf8)
                Issue.record("rewrote \(path); unset ASPECTS_REGENERATE and rebuild")
            } else {
                #expect(current == contents, "\(path) is stale: run `swift run aspects-gen`")
            }
        }
    }

    /// Catalog.builtIn is generated data (CatalogData.swift), not a parse at start: it must be
    /// the parse of the spec in every field, each compared apart so a failure names the field.
    @Test func builtInCatalogIsTheSpec() throws {
        let spec = try String(contentsOfFile: Paths.root + "/config/catalog.spec", encoding: .utf8)
        let parsed = try CatalogParser().parse(spec)
        let builtIn = Catalog.builtIn
        #expect(builtIn.functions.count == parsed.functions.count)
        for (b, p) in zip(builtIn.functions, parsed.functions) {
            #expect(b.name == p.name)
            #expect(b.signature == p.signature, "\(p.name): signature")
            #expect(b.fixedCount == p.fixedCount, "\(p.name): fixedCount")
            #expect(b.exportIndex == p.exportIndex, "\(p.name): exportIndex")
            #expect(b.groupIndex == p.groupIndex, "\(p.name): groupIndex")
            #expect(b.groupArguments == p.groupArguments, "\(p.name): groupArguments")
            #expect(b.testExpression == p.testExpression, "\(p.name): testExpression")
        }
        #expect(builtIn.groups.count == parsed.groups.count)
        for (b, p) in zip(builtIn.groups, parsed.groups) {
            #expect(b == p, "group \(p.index) (\(parsed.primary(of: p).name))")
        }
        #expect(builtIn.refused == parsed.refused)
        #expect(Set(builtIn.flagSets.keys) == Set(parsed.flagSets.keys))
        for (name, p) in parsed.flagSets {
            let b = builtIn.flagSets[name]
            #expect(b?.kind == p.kind, "flag set \(name): kind")
            #expect(b?.flags.map(\.name) == p.flags.map(\.name), "flag set \(name): names")
            #expect(b?.flags.map(\.value) == p.flags.map(\.value), "flag set \(name): values")
        }
        #expect(builtIn.families == parsed.families)
        #expect(builtIn.abiHash == parsed.abiHash)
        #expect(builtIn.function(named: "open64")?.exportIndex == parsed.function(named: "open64")?.exportIndex)
        // The whole value too: a field added to Catalog later is compared without a line here.
        #expect(builtIn == parsed)
    }

    /// The generated data follows the spec: a change of a header line changes it.
    @Test func catalogDataChangesWithTheSpec() throws {
        let spec = try String(contentsOfFile: Paths.root + "/config/catalog.spec", encoding: .utf8)
        func data(_ text: String) throws -> String? {
            try CatalogCodegen(specText: text).outputs().first { $0.path.hasSuffix("/CatalogData.swift") }?.contents
        }
        let current = try #require(try data(spec))
        let edited = spec.replacingOccurrences(of: "    header: fcntl.h\n", with: "    header: fcntl-edited.h\n")
        #expect(edited != spec)
        let changed = try #require(try data(edited))
        #expect(current.contains("header: \"fcntl.h\"") && !current.contains("fcntl-edited.h"))
        #expect(changed.contains("header: \"fcntl-edited.h\""))
    }

    @Test func catalogHasTheCoreFunctions() {
        let names = Set(Catalog.builtIn.functions.map(\.name))
        for n in ["open", "open64", "__open_2", "__open64_2", "openat", "openat64", "creat", "close", "read", "write",
                  "pread", "pread64", "pwrite", "pwrite64", "fsync", "fdatasync", "rename", "unlink", "mkdir", "malloc",
                  "calloc", "realloc", "socket", "connect", "accept", "send", "recv", "getaddrinfo"] {
            #expect(names.contains(n), "\(n) missing from the catalog")
        }
        let open = Catalog.builtIn.function(named: "open64")!
        #expect(Catalog.builtIn.group(of: open).members.map { Catalog.builtIn.functions[$0].name } == ["open", "open64", "__open_2", "__open64_2"])
    }

    @Test func catalogErrorsAreReportedWithTheLine() {
        #expect(throws: CatalogParser.Failure(line: 2, message: "'f' needs a 'failure:' line")) {
            try CatalogParser().parse("[x]\nint f(int a)\n    header: x.h\n")
        }
    }

    @Test func flagSetsHaveTheHeadersValues() throws {
        let bin = try Fixture.build("flag_values")
        var fromHeaders: [String: UInt64] = [:]
        for line in try Proc.run(bin).stdout.split(separator: "\n") {
            let parts = line.split(separator: " ")
            fromHeaders[String(parts[0])] = UInt64(parts[1])
        }
        var checked = 0
        for set in Catalog.builtIn.flagSets.values {
            for flag in set.flags {
                #expect(fromHeaders[flag.name] == flag.value, "\(set.name): \(flag.name)")
                checked += 1
            }
        }
        #expect(checked == fromHeaders.count)
    }
}
