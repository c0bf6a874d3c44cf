import Foundation
import Testing
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

    @Test func exportsAreExactlyTheCatalog() throws {
        let r = try Proc.run("/usr/bin/env", ["nm", "-D", "--defined-only", Paths.library])
        // Global symbols only; the linker's own markers (_edata, _end, __bss_start) are not code.
        let linkerMarkers: Set<String> = ["_edata", "_end", "__bss_start"]
        let exported = Set(r.stdout.split(separator: "\n").compactMap { line -> String? in
            let parts = line.split(separator: " ")
            guard parts.count == 3, parts[1].uppercased() == parts[1], !linkerMarkers.contains(String(parts[2])) else { return nil }
            return String(parts[2])
        })
        #expect(exported == Set(Catalog.builtIn.functions.map(\.name)).union(Self.adviceAPI).union(Self.signalInterposers))
    }

    /// sigaction and the signal() family: libaspects.so puts its trampoline in front of the
    /// program's handlers (signals.c), which no rule can name (they are not in the catalog).
    static let signalInterposers: Set<String> = ["sigaction", "__sigaction", "signal", "bsd_signal", "ssignal", "sysv_signal",
                                                 "__sysv_signal", "sigset"]

    /// The functions aspects_advice.h declares: the C API of advice as code, which advice
    /// objects find in the process when they are loaded.
    static let adviceAPI: Set<String> = {
        let header = (try? String(contentsOfFile: Paths.root + "/Sources/CPreload/include/aspects_advice.h", encoding: .utf8)) ?? ""
        return Set(header.split(separator: "\n").compactMap { line -> String? in
            guard let m = line.firstMatch(of: #/^[a-z][a-z0-9_ ]*[ *](aspects_[a-z0-9_]+)\(/#) else { return nil }
            return String(m.1)
        })
    }()

    @Test func theAdviceAPIIsExportedWhole() throws {
        #expect(Self.adviceAPI.count >= 25, "\(Self.adviceAPI.sorted())")
        let r = try Proc.run("/usr/bin/env", ["nm", "-D", "--defined-only", Paths.library])
        for name in Self.adviceAPI { #expect(r.stdout.contains(" T \(name)\n"), "\(name)") }
        // the engine implements the API; it is no advice object itself
        #expect(!r.stdout.contains("aspects_advice_version"))
    }

    @Test func everyExportIsAFunctionOfTheTextSegment() throws {
        let r = try Proc.run("/usr/bin/env", ["nm", "-D", "--defined-only", Paths.library])
        for name in Catalog.builtIn.functions.map(\.name) {
            #expect(r.stdout.contains(" T \(name)\n"), "\(name)")
        }
    }
}
