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

    @Test func builtInCatalogIsTheSpec() throws {
        let spec = try String(contentsOfFile: Paths.root + "/config/catalog.spec", encoding: .utf8)
        #expect(try CatalogParser().parse(spec).abiHash == Catalog.builtIn.abiHash)
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
