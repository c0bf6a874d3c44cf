import Foundation
import AspectsCore
import AspectsPreflight
import AspectsRules

/// Source locations of call sites: `ledger+0x1a2b` becomes `ledger.c:57 (ledger_write)` when
/// the object has debug information. Sites name an object by its file name only, so the
/// objects are looked up among the paths given (the program and its libraries), then on PATH
/// (the programs a script runs). `addr2line` (binutils) reads the debug information, once per
/// object for all of its sites; without it, or without debug information, sites stay as they
/// are.
package struct SiteSymbolizer: Sendable {
    /// object file name → path
    let paths: [String: String]

    package init(objects: [String]) {
        var paths: [String: String] = [:]
        for p in objects { paths[(p as NSString).lastPathComponent] = paths[(p as NSString).lastPathComponent] ?? p }
        self.paths = paths
    }

    /// The program and the libraries the loader resolves for it.
    package static func forProgram(_ program: String) -> SiteSymbolizer { forPrograms([program]) }

    /// The programs (those of a process tree) and the libraries the loader resolves for each.
    package static func forPrograms(_ programs: [String]) -> SiteSymbolizer {
        SiteSymbolizer(objects: programs.flatMap { [$0] + Preflight.libraries(of: $0) })
    }

    /// A location for each site that could be symbolized. A site is a return address, as a
    /// stack frame above the first is.
    package func locations(of sites: Set<CallSite>) -> [CallSite: String] {
        let located = sites.compactMap { site in path(of: site.object).map { (site, StackFrame(object: $0, offset: site.offset, isReturnAddress: true)) } }
        let frames = Self.symbolize(located.map(\.1))
        var out: [CallSite: String] = [:]
        for ((site, _), frame) in zip(located, frames) {
            guard let file = frame.file, let line = frame.line else { continue }
            out[site] = frame.symbol.map { "\(file):\(line) (\($0))" } ?? "\(file):\(line)"
        }
        return out
    }

    /// The function each site (a return address) is in, for the sites that could be told.
    package func symbols(of sites: Set<CallSite>) -> [CallSite: String] {
        let located = sites.compactMap { site in path(of: site.object).map { (site, StackFrame(object: $0, offset: site.offset, isReturnAddress: true)) } }
        var out: [CallSite: String] = [:]
        for ((site, _), frame) in zip(located, Self.symbolize(located.map(\.1))) { out[site] = frame.symbol }
        return out
    }

    /// A site with its source location when known: `ledger+0x1a2b (ledger.c:57 (ledger_write))`.
    package static func describe(_ site: CallSite, at location: String?) -> String {
        location.map { "\(site) (\($0))" } ?? site.description
    }

    func path(of object: String) -> String? {
        if let p = paths[object] { return p }
        return object.contains("/") ? nil : ProgramPath.find(object)
    }

    /// The file name and line of addr2line's second line; nil when unknown.
    static func place(_ text: String) -> (String, Int)? {
        // "/src/ledger.c:57" or "/src/ledger.c:57 (discriminator 1)"
        let spot = text.split(separator: " ").first.map(String.init) ?? text
        guard let colon = spot.lastIndex(of: ":"), let line = Int(spot[spot.index(after: colon)...]), line > 0 else { return nil }
        let file = (String(spot[..<colon]) as NSString).lastPathComponent
        return file == "??" ? nil : (file, line)
    }

    /// addr2line's function name; nil when unknown.
    static func symbol(_ function: String) -> String? { function == "??" || function.isEmpty ? nil : function }

    /// Stack frames with their symbol and file:line where the object's debug information (its
    /// own, or the separate file addr2line finds by build-id under /usr/lib/debug) tells, else
    /// their symbol where the symbol tables have one that contains the address; one addr2line
    /// per object. (Without debug information addr2line names the nearest symbol before the
    /// address, which for a static function is some other function: a frame with no symbol
    /// that contains it keeps object+offset, which is at least not wrong.)
    package static func symbolize(_ frames: [StackFrame]) -> [StackFrame] {
        guard let tool = addr2line else { return frames }
        var out = frames
        for (path, indices) in Dictionary(grouping: frames.indices, by: { frames[$0].object }) {
            guard let segments = ELFLoadSegments(path: path) else { continue }
            // A return address: the call is the instruction before it.
            let wanted = indices.compactMap { k in
                segments.address(ofFileOffset: frames[k].offset &- (frames[k].isReturnAddress ? 1 : 0)).map { (k, $0) }
            }
            guard !wanted.isEmpty else { continue }
            let lines = run(tool, ["-e", path, "-f", "-C"] + wanted.map { "0x" + String($0.1, radix: 16) })
            guard lines.count == 2 * wanted.count else { continue }
            var symbols: ELFSymbols?
            for (n, (k, address)) in wanted.enumerated() {
                if let (file, line) = place(lines[2 * n + 1]) {
                    out[k].symbol = symbol(lines[2 * n])
                    out[k].file = file
                    out[k].line = line
                } else {
                    if symbols == nil { symbols = ELFSymbols(path: path) }
                    out[k].symbol = symbols!.containing(address)
                }
            }
        }
        return out
    }

    static let addr2line: String? = ["/usr/bin/addr2line", "/bin/addr2line"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// The tool's output lines; none when it failed, unless `anyStatus` (readelf exits 1 when
    /// an object has sections it does not dump, after dumping the rest).
    static func run(_ tool: String, _ arguments: [String], anyStatus: Bool = false) -> [String] {
        guard let r = try? Subprocess.run(tool, arguments), r.status == 0 || anyStatus else { return [] }
        return lines(r.stdout)
    }

    /// A tool's output as lines (what follows the last newline is not one).
    static func lines(_ data: Data) -> [String] {
        String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }
}

/// An ELF file's PT_LOAD segments: sites are offsets in the file, debug information speaks of
/// link-time addresses.
package struct ELFLoadSegments {
    package struct Segment { var offset, address, size: UInt64 }
    package let segments: [Segment]

    package init?(path: String) {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let head = try? handle.read(upToCount: 64), head.count == 64 else { return nil }
        let h = [UInt8](head)
        guard h[0] == 0x7f, h[1] == 0x45, h[2] == 0x4c, h[3] == 0x46, h[4] == 2, h[5] == 1 else { return nil } // ELF64 LE
        func int(_ b: [UInt8], _ o: Int, _ n: Int) -> UInt64 { (0..<n).reduce(0) { $0 | UInt64(b[o + $1]) << (8 * $1) } }
        let phoff = int(h, 0x20, 8), phentsize = int(h, 0x36, 2), phnum = int(h, 0x38, 2)
        guard phentsize >= 56, phnum > 0, phnum < 4096, phoff < 1 << 32 else { return nil }
        do { try handle.seek(toOffset: phoff) } catch { return nil }
        guard let table = try? handle.read(upToCount: Int(phentsize * phnum)), table.count == Int(phentsize * phnum) else { return nil }
        let t = [UInt8](table)
        var segments: [Segment] = []
        for i in 0..<Int(phnum) {
            let o = i * Int(phentsize)
            guard int(t, o, 4) == 1 else { continue } // PT_LOAD
            segments.append(Segment(offset: int(t, o + 8, 8), address: int(t, o + 16, 8), size: int(t, o + 32, 8)))
        }
        self.segments = segments
    }

    package func address(ofFileOffset offset: UInt64) -> UInt64? {
        segments.first { offset >= $0.offset && offset - $0.offset < $0.size }.map { offset - $0.offset + $0.address }
    }
}

/// An object's function symbols with their sizes (`nm -S`, the symbol table and the dynamic
/// one): which function contains an address, if any.
struct ELFSymbols {
    struct Symbol { var start, end: UInt64; var name: String }
    let symbols: [Symbol]

    init(path: String) {
        guard let nm = ["/usr/bin/nm", "/bin/nm"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else { symbols = []; return }
        var all: [Symbol] = []
        for table in [[], ["-D"]] {
            for line in Self.nm(nm, table + ["-S", "-C", "--defined-only", path]) {
                // "000000000062cce0 0000000000000025 T PyThreadState_New"
                let f = line.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: true)
                guard f.count == 4, "tTwWi".contains(f[2]), let start = UInt64(f[0], radix: 16), let size = UInt64(f[1], radix: 16), size > 0 else { continue }
                all.append(Symbol(start: start, end: start &+ size, name: String(f[3])))
            }
        }
        symbols = all.sorted { $0.start < $1.start }
    }

    /// nm's lines. With the target named (any ELF64 LE object, as ELFLoadSegments takes; the
    /// output is the same) GNU nm does not try its plugins on the file first: loading the LLVM
    /// LTO plugin made each nm 28 ms of CPU, 2 ms without. An nm that refuses the option
    /// (llvm-nm) runs again without it.
    static func nm(_ tool: String, _ arguments: [String]) -> [String] {
        if let r = try? Subprocess.run(tool, ["--target=elf64-little"] + arguments), r.status == 0 || !r.stdout.isEmpty {
            return SiteSymbolizer.lines(r.stdout)
        }
        return SiteSymbolizer.run(tool, arguments, anyStatus: true)
    }

    func containing(_ address: UInt64) -> String? {
        var lo = 0, hi = symbols.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if symbols[mid].start <= address { lo = mid + 1 } else { hi = mid }
        }
        // symbols can nest or repeat (aliases): the nearest start that still contains it
        return symbols[..<lo].last { address < $0.end }?.name
    }
}
