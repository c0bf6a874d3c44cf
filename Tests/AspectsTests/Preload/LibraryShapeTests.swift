import Foundation
import Testing
import AspectsCodegen
import AspectsRules

/// What libaspects.so brings into every process: its dependencies and its exported symbols.
@Suite struct LibraryShapeTests {
    /// libffi is loaded on first use with RTLD_LOCAL (ffi_lazy.c), so it is not NEEDED at all.
    @Test func neededIsOnlyLibc() throws {
        let r = try Proc.run("/usr/bin/env", ["readelf", "-d", Paths.library])
        let needed = r.stdout.split(separator: "\n").filter { $0.contains("(NEEDED)") }.compactMap { line -> String? in
            guard let open = line.firstIndex(of: "["), let close = line.firstIndex(of: "]") else { return nil }
            return String(line[line.index(after: open)..<close])
        }
        #expect(Set(needed).isSubset(of: ["libc.so.6", "libffi.so.8", "libdl.so.2", "ld-linux-x86-64.so.2"]), "\(needed)")
        #expect(needed.contains("libc.so.6"))
        #expect(!needed.contains("libffi.so.8"))
        #expect(!r.stdout.contains("swift"))
        #expect(!r.stdout.contains("RPATH") && !r.stdout.contains("toolchain"))
    }

    /// No RUNPATH or RPATH at all: SwiftPM's `$ORIGIN` would make the loader look for the
    /// preload's dependencies, and for bare names it dlopens, next to libaspects.so.
    @Test func noRunpathNextToThePreload() throws {
        let r = try Proc.run("/usr/bin/env", ["readelf", "-d", Paths.library])
        #expect(r.status == 0 && r.stdout.contains("(NEEDED)"), "\(r)")
        #expect(!r.stdout.contains("RUNPATH") && !r.stdout.contains("RPATH") && !r.stdout.contains("$ORIGIN"), "\(r.stdout)")
    }

    /// The names of the committed version script (generated/exports.map), which the link uses.
    static func scriptNames() throws -> [String] {
        let text = try String(contentsOfFile: Paths.root + "/" + ExportsScript.path, encoding: .utf8)
        let global = try #require(text.range(of: "global:")), local = try #require(text.range(of: "local:"))
        return text[global.upperBound..<local.lowerBound].replacing(#/\/\*[^*]*\*\//#, with: "")
            .split(whereSeparator: { $0 == ";" || $0.isWhitespace }).map(String.init)
    }

    /// `nm -D --defined-only` lists exactly the version script's names (and the linker's own
    /// markers, which are not code); the script is fresh (GeneratedFilesTests).
    @Test func exportsAreExactlyTheVersionScript() throws {
        let r = try Proc.run("/usr/bin/env", ["nm", "-D", "--defined-only", Paths.library])
        let linkerMarkers: Set<String> = ["_edata", "_end", "__bss_start"]
        let exported = r.stdout.split(separator: "\n").compactMap { line -> String? in
            let parts = line.split(separator: " ")
            // global symbols only: a local TLS symbol stays in the dynamic table for its relocations
            guard parts.count == 3, parts[1].uppercased() == parts[1], !linkerMarkers.contains(String(parts[2])) else { return nil }
            return String(parts[2])
        }
        let script = try Self.scriptNames()
        #expect(script.count == Set(script).count, "a name twice in the script")
        #expect(Set(exported) == Set(script), "exported, not in the script: \(Set(exported).subtracting(script).sorted()); in the script, not exported: \(Set(script).subtracting(exported).sorted())")
    }

    /// The script holds the catalog, the advice API aspects_advice.h declares, and the signal
    /// family libaspects.so defines in place of libc's (signals.c).
    @Test func theVersionScriptNamesEveryKindOfExport() throws {
        let script = Set(try Self.scriptNames())
        #expect(Set(Catalog.builtIn.functions.map(\.name)).isSubset(of: script))
        for name in ["aspects_proceed", "aspects_set_return_int", "aspects_caller_object", "sigaction", "signal", "sigset"] {
            #expect(script.contains(name), "\(name)")
        }
        #expect(!script.contains("aspects_advice_version"), "the engine implements the API; it is no advice object itself")
    }

    @Test func everyExportIsAFunctionOfTheTextSegment() throws {
        let r = try Proc.run("/usr/bin/env", ["nm", "-D", "--defined-only", Paths.library])
        for name in Catalog.builtIn.functions.map(\.name) {
            #expect(r.stdout.contains(" T \(name)\n"), "\(name)")
        }
    }
}
