import AspectsCore
import AspectsExplore
import Foundation
import Testing

/// The symbolizer's own reader of line tables (Sources/AspectsExplore/Symbols) against the
/// oracle it replaces: for every address of the fixture's functions, compiled as gcc and clang
/// write DWARF 2 to 5, compressed or not, stripped with its debug file beside it, the file and
/// line are addr2line's (binutils' and LLVM's); the function is the one `nm -S` listed; and libc through libc6-dbg's
/// separate debug file agrees on a sample of its functions.
@Suite(.tags(.realPrograms), .serialized) struct SymbolsAgreementTests {
    static let fixture = Fixture.path("symbols_lines.c")
    static let clang = ProgramPath.find("clang")

    /// A fresh directory of this test's own, removed at the end of the test.
    final class Scratch {
        let path = NSTemporaryDirectory() + "aspects-symbols-\(UUID().uuidString)"
        init() throws { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }
        deinit { try? FileManager.default.removeItem(atPath: path) }
    }

    static func compile(_ compiler: String, _ flags: [String], into dir: String, name: String = "lines", source: String = fixture) throws
        -> String
    {
        let out = dir + "/" + name
        let r = try Proc.run("/usr/bin/env", [compiler, "-O1", "-o", out, source] + flags, timeout: 120)
        try #require(r.status == 0, "\(compiler) \(flags) failed: \(r.stderr)")
        return out
    }

    /// Every address of the object's defined functions (at most `limit`, evenly spread).
    static func addresses(of object: ObjectDebugInfo, limit: Int = 4000) -> [UInt64] {
        let all = object.functions.symbols.flatMap { s in (s.start..<min(s.end, s.start + 4096)).map { $0 } }
        let step = max(1, all.count / limit)
        return stride(from: 0, to: all.count, by: step).map { all[$0] }
    }

    /// The oracles: binutils' addr2line (what the symbolizer ran before, and still runs where
    /// its reader cannot), and LLVM's symbolizer (the Swift toolchain's) in addr2line's output
    /// style. binutils 2.40 reads a DWARF 5 row's file number as one less than it is (file 1 as
    /// entry 0), so where a unit's code comes from an included file it names the including
    /// one (libc's `s_signbitf128.c:25` for `s_signbitl.c:25`, as readelf's decoded table and
    /// llvm-addr2line say): on tables of several files, LLVM's is the oracle.
    enum Oracle: String, CaseIterable, Sendable {
        case binutils, llvm

        var tool: String? {
            switch self {
            case .binutils: ProgramPath.find("addr2line")
            case .llvm: ProgramPath.find("llvm-symbolizer")
            }
        }

        func arguments(_ path: String) -> [String] {
            switch self {
            case .binutils: ["-e", path]
            case .llvm: ["--obj=" + path, "--output-style=GNU", "--no-inlines", "--functions=none"]
            }
        }
    }

    /// The oracle's file:line (what the symbolizer keeps of it) for each address.
    static func oracle(_ oracle: Oracle, _ path: String, _ addresses: [UInt64]) throws -> [UInt64: SourcePlace] {
        let tool = try #require(oracle.tool, "\(oracle) is not installed")
        let r = try Proc.run(tool, oracle.arguments(path) + addresses.map { "0x" + String($0, radix: 16) }, timeout: 120)
        try #require(r.status == 0, "\(tool) failed: \(r.stderr)")
        let lines = r.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        try #require(lines.count == addresses.count)
        var out: [UInt64: SourcePlace] = [:]
        for (a, text) in zip(addresses, lines) {
            if let (file, line) = SiteSymbolizer.place(String(text)) { out[a] = SourcePlace(file: file, line: line) }
        }
        return out
    }

    static func expectAgreement(_ ours: [UInt64: SourcePlace], _ theirs: [UInt64: SourcePlace], _ addresses: [UInt64], _ what: String) {
        let differing = addresses.filter { ours[$0] != theirs[$0] }
        func place(_ p: SourcePlace?) -> String { p.map { "\($0.file):\($0.line)" } ?? "??" }
        #expect(
            differing.isEmpty,
            Comment(
                rawValue: "\(what): \(differing.count) of \(addresses.count) differ, e.g. "
                    + differing.prefix(5).map { "0x\(String($0, radix: 16)): \(place(ours[$0])) vs \(place(theirs[$0]))" }.joined(
                        separator: ", ")))
    }

    /// The reader's places where it names a line (line 0 is "no line", as addr2line's `:0`).
    static func places(_ object: ObjectDebugInfo, _ addresses: [UInt64]) throws -> [UInt64: SourcePlace] {
        let places = try #require(object.places(of: addresses), "the reader fell back to addr2line")
        return places.filter { $0.value.line > 0 }
    }

    static func expectAgreement(_ path: String, source: String = "symbols_lines.c", sourceLines: Int = 10, sourceComment: String) throws {
        let object = try #require(ObjectDebugInfo(path: path, debugDirectory: "/nonexistent"))
        let addresses = addresses(of: object)
        let ours = try places(object, addresses)
        for oracle in Oracle.allCases where oracle.tool != nil {
            expectAgreement(ours, try Self.oracle(oracle, path, addresses), addresses, "\(sourceComment), \(oracle)")
        }
        // the fixture's own lines were found, not merely agreed to be unknown
        #expect(Set(ours.values.filter { $0.file == source }.map(\.line)).count >= sourceLines, Comment(rawValue: sourceComment))
    }

    static let gccVariants: [[String]] = [
        ["-g", "-gdwarf-2"], ["-g", "-gdwarf-3"], ["-g", "-gdwarf-4"], ["-g", "-gdwarf-5"],
        ["-g", "-gz"], ["-g", "-gdwarf-4", "-gz"], ["-g", "-pie", "-fPIE"], ["-g", "-no-pie"],
    ]

    @Test(arguments: gccVariants) func gccLineTablesAgreeWithAddr2line(_ flags: [String]) throws {
        let dir = try Scratch()
        try Self.expectAgreement(try Self.compile("cc", flags, into: dir.path), sourceComment: "cc \(flags.joined(separator: " "))")
    }

    @Test(
        .requires(clang != nil, "needs clang (the Swift toolchain's)"),
        arguments: [["-g", "-gdwarf-5"], ["-g", "-gdwarf-4"], ["-g", "-gz"]])
    func clangLineTablesAgreeWithAddr2line(_ flags: [String]) throws {
        let dir = try Scratch()
        try Self.expectAgreement(
            try Self.compile(Self.clang!, flags, into: dir.path), sourceComment: "clang \(flags.joined(separator: " "))")
    }

    /// A stripped object finds its debug file by `.gnu_debuglink`, beside it or in `.debug/`;
    /// one whose CRC does not match is not taken.
    @Test(arguments: [false, true]) func aStrippedObjectFindsItsDebugLinkFile(inDebugDirectory: Bool) throws {
        let dir = try Scratch()
        let full = try Self.compile("cc", ["-g", "-gdwarf-5", "-Wl,--build-id=none"], into: dir.path, name: "full")
        let debugDir = inDebugDirectory ? dir.path + "/.debug" : dir.path
        try FileManager.default.createDirectory(atPath: debugDir, withIntermediateDirectories: true)
        let debug = debugDir + "/lines.debug"
        let stripped = dir.path + "/lines"
        for args in [
            ["--only-keep-debug", full, debug], ["--strip-debug", "--strip-unneeded", "--add-gnu-debuglink=" + debug, full, stripped],
        ] {
            let r = try Proc.run("/usr/bin/objcopy", args, timeout: 60)
            try #require(r.status == 0, "objcopy \(args) failed: \(r.stderr)")
        }
        try Self.expectAgreement(stripped, sourceComment: "stripped, debug file in \(inDebugDirectory ? ".debug/" : "its directory")")
        // the static function's name comes from the debug file's symbol table
        let object = try #require(ObjectDebugInfo(path: stripped, debugDirectory: "/nonexistent"))
        #expect(object.functions.symbols.contains { $0.name == "classify" })

        // another build's debug file under the same name: wrong CRC, not used
        try FileManager.default.removeItem(atPath: debug)
        let other = try Self.compile("cc", ["-g", "-DOTHER=1", "-O0", "-Wl,--build-id=none"], into: dir.path, name: "other")
        let r = try Proc.run("/usr/bin/objcopy", ["--only-keep-debug", other, debug], timeout: 60)
        try #require(r.status == 0)
        let unlinked = try #require(ObjectDebugInfo(path: stripped, debugDirectory: "/nonexistent"))
        #expect(unlinked.places(of: Self.addresses(of: unlinked)) == [:])
    }

    /// In the global debug directory (a directory of the test's own here, /usr/lib/debug in
    /// use): by build-id under `.build-id/xx/rest.debug`, only when the file's own build-id
    /// matches, else by debuglink under the object's directory's path.
    @Test func aStrippedObjectFindsItsDebugFileInTheGlobalDirectory() throws {
        let dir = try Scratch()
        let global = dir.path + "/global"
        let full = try Self.compile("cc", ["-g", "-gdwarf-4", "-Wl,--build-id=sha1"], into: dir.path, name: "full")
        let other = try Self.compile("cc", ["-g", "-O0", "-Wl,--build-id=sha1"], into: dir.path, name: "other")
        func objcopy(_ args: [String]) throws {
            let r = try Proc.run("/usr/bin/objcopy", args, timeout: 60)
            try #require(r.status == 0, "objcopy \(args) failed: \(r.stderr)")
        }
        let notes = try Proc.run("/usr/bin/readelf", ["-n", full], timeout: 60).stdout
        let id = try #require(notes.firstMatch(of: #/Build ID: ([0-9a-f]+)/#).map { String($0.1) })
        let byID = global + "/.build-id/\(id.prefix(2))"
        try FileManager.default.createDirectory(atPath: byID, withIntermediateDirectories: true)
        let stripped = dir.path + "/lines"
        try objcopy(["--strip-debug", "--strip-unneeded", full, stripped])
        let reference = try #require(ObjectDebugInfo(path: full, debugDirectory: global))
        let addresses = Self.addresses(of: reference)
        let expected = try Self.places(reference, addresses)
        #expect(expected.count > 100)

        // another build's debug file at this build-id's path: its build-id differs, not used
        try objcopy(["--only-keep-debug", other, byID + "/\(id.dropFirst(2)).debug"])
        #expect(try #require(ObjectDebugInfo(path: stripped, debugDirectory: global)).places(of: addresses) == [:])
        // the right one
        try objcopy(["--only-keep-debug", full, byID + "/\(id.dropFirst(2)).debug"])
        #expect(try Self.places(try #require(ObjectDebugInfo(path: stripped, debugDirectory: global)), addresses) == expected)

        // no build-id file; a debuglink name under the global directory by the object's directory
        try FileManager.default.removeItem(atPath: global + "/.build-id")
        let linked = dir.path + "/linked"
        let debug = dir.path + "/lines.debug"
        try objcopy(["--only-keep-debug", full, debug])
        try objcopy(["--strip-debug", "--strip-unneeded", "--add-gnu-debuglink=" + debug, full, linked])
        try FileManager.default.removeItem(atPath: debug)
        try FileManager.default.createDirectory(atPath: global + dir.path, withIntermediateDirectories: true)
        try objcopy(["--only-keep-debug", full, global + dir.path + "/lines.debug"])
        #expect(try Self.places(try #require(ObjectDebugInfo(path: linked, debugDirectory: global)), addresses) == expected)
    }

    /// The function of each address is the one nm's sized symbols contain (what ELFSymbols read
    /// with `nm -S -C` before): C's, and C++'s demangled as nm -C did, without nm's `@VERSION`
    /// and gcc's clone suffixes (`f.cold`, `f(int) [clone .cold]`).
    @Test(arguments: [("cc", "symbols_lines.c"), ("c++", "symbols_cxx.cpp")])
    func functionsAreThoseNmListed(compiler: String, source: String) throws {
        let dir = try Scratch()
        let path = try Self.compile(
            compiler, ["-g", "-shared", "-fPIC"], into: dir.path, name: "liblines.so", source: Fixture.path(source))
        let object = try #require(ObjectDebugInfo(path: path, debugDirectory: "/nonexistent"))
        var nm: [(start: UInt64, end: UInt64, name: String)] = []
        for table in [[], ["-D"]] {
            let r = try Proc.run("/usr/bin/nm", table + ["-S", "-C", "--defined-only", path], timeout: 60)
            for line in r.stdout.split(separator: "\n") {
                let f = line.split(separator: " ", maxSplits: 3)
                guard f.count == 4, "tTwWi".contains(f[2]), let start = UInt64(f[0], radix: 16), let size = UInt64(f[1], radix: 16),
                    size > 0
                else { continue }
                var name = String(f[3].prefix { $0 != "@" })
                if let clone = name.range(of: " [clone ") { name = String(name[..<clone.lowerBound]) }
                if !name.contains("(") { name = String(name.prefix { $0 != "." }) }
                nm.append((start, start + size, name))
            }
        }
        try #require(nm.count >= 4)
        for s in nm {
            for a in [s.start, (s.start + s.end) / 2, s.end - 1] {
                let names = Set(nm.filter { $0.start <= a && a < $0.end }.map(\.name))
                #expect(object.functions.containing(a).map { names.contains($0) } == true, "0x\(String(a, radix: 16)) in \(names)")
            }
        }
        if source.hasSuffix(".cpp") {
            for name in [
                "shapes::Square::area() const", "shapes::scaled(int, int)",
                "int shapes::total<int>(std::vector<int, std::allocator<int> > const&)",
            ] {
                #expect(object.functions.symbols.contains { $0.name == name }, Comment(rawValue: name))
            }
            try Self.expectAgreement(path, source: source, sourceLines: 4, sourceComment: "c++")
        }
    }

    /// `symbolize` names a frame of the fixture by its function, file and line.
    @Test func symbolizeNamesAFixtureFrame() throws {
        let dir = try Scratch()
        let path = try Self.compile("cc", ["-g"], into: dir.path)
        let object = try #require(ObjectDebugInfo(path: path))
        let label = try #require(object.functions.symbols.first { $0.name == "label" })
        let segment = try #require(object.segments.segments.first { label.start >= $0.address && label.start - $0.address < $0.size })
        let frame = StackFrame(object: path, offset: label.start - segment.address + segment.offset + 1, isReturnAddress: true)
        let symbolized = SiteSymbolizer.symbolize([frame])[0]
        #expect(symbolized.symbol == "label")
        #expect(symbolized.file == "symbols_lines.c")
        #expect((30...40).contains(symbolized.line ?? 0))
    }

    static let libc = "/lib/x86_64-linux-gnu/libc.so.6"
    static let hasLibcDebug =
        FileManager.default.fileExists(atPath: libc) && FileManager.default.fileExists(atPath: "/usr/share/doc/libc6-dbg")

    /// libc through libc6-dbg's debug file (DWARF 5, compressed, by build-id): a few hundred of
    /// its functions' addresses, at their start and inside.
    @Test(
        .requires(hasLibcDebug, "needs libc6-dbg (.ci/run installs it)"),
        .requires(Oracle.llvm.tool != nil, "needs llvm-symbolizer (the Swift toolchain's)"))
    func libcThroughItsDebugFileAgreesWithAddr2line() throws {
        let object = try #require(ObjectDebugInfo(path: Self.libc))
        let functions = object.functions.symbols
        try #require(functions.count > 1000)
        let sample = stride(from: 0, to: functions.count, by: functions.count / 200).map { functions[$0] }
        let addresses = sample.flatMap { [$0.start, $0.start + ($0.end - $0.start) / 2] }
        let ours = try Self.places(object, addresses)
        Self.expectAgreement(ours, try Self.oracle(.llvm, Self.libc, addresses), addresses, "libc")
        #expect(ours.count > addresses.count / 2)
        // glibc's static start-up function is named (StartupFrames relies on it), and of a
        // function's aliases the one it is called by
        for name in ["__libc_start_call_main", "__libc_start_main", "getdelim", "_IO_file_doallocate"] {
            #expect(functions.contains { $0.name == name }, Comment(rawValue: name))
        }
    }
}
