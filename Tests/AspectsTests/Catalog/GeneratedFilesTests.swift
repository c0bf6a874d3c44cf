import Foundation
import Testing
@testable import AspectsCodegen
import AspectsCore
import AspectsRules

/// The committed outputs of aspects-gen must equal what the specs (the catalog's, the rule slot's)
/// generate now. ASPECTS_REGENERATE=1 rewrites them (and fails on purpose, so the run is never
/// mistaken for a pass).
@Suite struct GeneratedFilesTests {
    /// Compares each output with its file, or rewrites it under ASPECTS_REGENERATE=1.
    func expectFresh(_ outputs: [(path: String, contents: String)], command: String) throws {
        let regenerate = ProcessInfo.processInfo.environment["ASPECTS_REGENERATE"] == "1"
        for (path, contents) in outputs {
            let full = Paths.root + "/" + path
            let current = try? String(contentsOfFile: full, encoding: .utf8)
            if regenerate {
                if current != contents { try contents.write(toFile: full, atomically: true, encoding: .utf8) }
                Issue.record("rewrote \(path); unset ASPECTS_REGENERATE and rebuild")
            } else {
                let fresh = current == contents // not the texts themselves: a failure names the file, not its thousand lines
                #expect(fresh, "\(path) is stale: run `\(command)`")
            }
        }
    }

    @Test(.tags(.fast)) func generatedFilesAreFresh() throws {
        let spec = try String(contentsOfFile: Paths.root + "/config/catalog.spec", encoding: .utf8)
        try expectFresh(try CatalogCodegen(specText: spec).outputs(), command: "swift run aspects-gen")
    }

    /// The version script of libaspects.so is what the catalog and the public headers give.
    @Test func exportsScriptIsFresh() throws {
        let spec = try String(contentsOfFile: Paths.root + "/config/catalog.spec", encoding: .utf8)
        try expectFresh([try ExportsScript.output(catalog: try CatalogCodegen(specText: spec).catalog, root: Paths.root)],
                        command: "swift run aspects-gen")
    }

    static func ruleSlotSpec() throws -> String {
        try String(contentsOfFile: Paths.root + "/config/rule-slot.spec", encoding: .utf8)
    }

    static func packageFile(_ path: String) throws -> String {
        try String(contentsOfFile: Paths.root + "/" + path, encoding: .utf8)
    }

    /// The rule slot's C struct and pins, RuleSlot.swift and the schema's capacities are what
    /// config/rule-slot.spec gives.
    @Test(.tags(.fast)) func ruleSlotFilesAreFresh() throws {
        let outputs = try RuleSlotCodegen(specText: try Self.ruleSlotSpec()).outputs(current: Self.packageFile)
        #expect(Set(outputs.map(\.path)) == ["Sources/CAspectsABI/include/aspects_abi.h", "Sources/CAspectsABI/abi_asserts.c",
                                              "Sources/AspectsTable/Generated/RuleSlot.swift", "config/rule.schema.json"])
        try expectFresh(outputs, command: "swift run aspects-gen")
    }

    /// A spec edit reaches every output: a field's meaning the C comment, a capacity the
    /// #define and the schema's maxItems, a `<-` the Swift writer.
    @Test(.tags(.fast)) func ruleSlotOutputsFollowTheSpec() throws {
        let spec = try Self.ruleSlotSpec()
        func outputs(_ text: String) throws -> [String: String] {
            Dictionary(uniqueKeysWithValues: try RuleSlotCodegen(specText: text).outputs(current: Self.packageFile).map { ($0.path, $0.contents) })
        }
        let edited = spec
            .replacingOccurrences(of: ": calls on which the action ran", with: ": calls on which the action ran (edited)")
            .replacingOccurrences(of: "limit ASPECTS_MAX_CONTEXT_DEPTH 4 ", with: "limit ASPECTS_MAX_CONTEXT_DEPTH 3 ")
            .replacingOccurrences(of: "uint32_t result_arg <- resultArg", with: "uint32_t result_arg")
        #expect(edited != spec)
        let before = try outputs(spec), after = try outputs(edited)
        let header = try #require(after["Sources/CAspectsABI/include/aspects_abi.h"])
        #expect(header.contains("/* calls on which the action ran (edited) */"))
        #expect(header.contains("#define ASPECTS_MAX_CONTEXT_DEPTH 3u"))
        let schema = try JSONParser.parse(try #require(after["config/rule.schema.json"]))
        #expect(RuleSlotCodegen.node(at: "/$defs/when/properties/context/maxItems", in: schema)?.value == .number("3"))
        #expect(before["config/rule.schema.json"] == (try Self.packageFile("config/rule.schema.json")))
        #expect(before["Sources/AspectsTable/Generated/RuleSlot.swift"]!.contains("r.pointee.result_arg = UInt32(resultArg)"))
        #expect(!after["Sources/AspectsTable/Generated/RuleSlot.swift"]!.contains("result_arg = "))
    }

    /// An offset in the spec is the one C gives the field, or the spec is refused, naming the
    /// line, the field and the offset to write.
    @Test(.tags(.fast)) func ruleSlotSpecRefusesAnOffsetCDoesNotGive() throws {
        let spec = try Self.ruleSlotSpec()
        let moved = spec.replacingOccurrences(of: "\n368  uint64_t batch", with: "\n370  uint64_t batch")
        #expect(moved != spec)
        let line = spec.split(separator: "\n", omittingEmptySubsequences: false).firstIndex { $0.hasPrefix("368  uint64_t batch") }! + 1
        #expect(throws: RuleSlotSpec.Failure(line: line, message: "C puts `batch` at offset 368 (`family_len` ends at 368, aligned to 8), not 370: write 368, or a padding field before it")) {
            try RuleSlotSpec(parsing: moved)
        }
        let slotLine = spec.split(separator: "\n", omittingEmptySubsequences: false).firstIndex { $0.hasPrefix("slot ") }! + 1
        let shorter = spec.replacingOccurrences(of: "\n768  char strings[ASPECTS_RULE_STRINGS_SIZE]", with: "\n768  char strings[500]")
        #expect(throws: RuleSlotSpec.Failure(line: slotLine, message: "the fields end at 1268, but the slot is 1280 bytes: make them add up (grow or shrink `reserved1`)")) {
            try RuleSlotSpec(parsing: shorter)
        }
        let unknown = spec.replacingOccurrences(of: "aspects_matcher matchers[", with: "aspects_matchr matchers[")
        #expect(throws: RuleSlotSpec.Failure.self) { try RuleSlotSpec(parsing: unknown) }
    }

    /// Catalog.builtIn is generated data (CatalogData.swift), not a parse at start: it must be
    /// the parse of the spec in every field, each compared apart so a failure names the field.
    @Test(.tags(.fast)) func builtInCatalogIsTheSpec() throws {
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
    @Test(.tags(.fast)) func catalogDataChangesWithTheSpec() throws {
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

    @Test(.tags(.fast)) func catalogHasTheCoreFunctions() {
        let names = Set(Catalog.builtIn.functions.map(\.name))
        for n in ["open", "open64", "__open_2", "__open64_2", "openat", "openat64", "creat", "close", "read", "write",
                  "pread", "pread64", "pwrite", "pwrite64", "fsync", "fdatasync", "rename", "unlink", "mkdir", "malloc",
                  "calloc", "realloc", "socket", "connect", "accept", "send", "recv", "getaddrinfo"] {
            #expect(names.contains(n), "\(n) missing from the catalog")
        }
        let open = Catalog.builtIn.function(named: "open64")!
        #expect(Catalog.builtIn.group(of: open).members.map { Catalog.builtIn.functions[$0].name } == ["open", "open64", "__open_2", "__open64_2"])
    }

    @Test(.tags(.fast)) func catalogErrorsAreReportedWithTheLine() {
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
