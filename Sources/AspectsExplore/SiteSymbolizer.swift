import Foundation
import AspectsCore
import AspectsPreflight
import AspectsRules

/// Source locations of call sites: `ledger+0x1a2b` becomes `ledger.c:57 (ledger_write)` when
/// the object has debug information. Sites name an object by its file name only, so the
/// objects are looked up among the paths given (the program and its libraries), then on PATH
/// (the programs a script runs). The line table and symbol tables are read here
/// (`Symbols/`); `addr2line` (binutils) only where that reader cannot; without debug
/// information, sites get their function's name at most.
package struct SiteSymbolizer: Sendable {
    /// object file name → path, by the name given and by the real file's (sites are named by
    /// the file's own name, `libsqlite3.so.0.8.6`, where the loader names the link `libsqlite3.so.0`)
    let paths: [String: String]

    package init(objects: [String]) {
        var paths: [String: String] = [:]
        for p in objects {
            for name in [p, ProcessGlob.realPath(p)].compactMap({ $0.map { ($0 as NSString).lastPathComponent } }) {
                paths[name] = paths[name] ?? p
            }
        }
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
        for ((site, _), frame) in zip(located, Self.symbolize(located.map(\.1), lines: false)) { out[site] = frame.symbol }
        return out
    }

    /// A site with its source location when known: `ledger+0x1a2b (ledger.c:57 (ledger_write))`.
    package static func describe(_ site: CallSite, at location: String?) -> String {
        location.map { "\(site) (\($0))" } ?? site.description
    }

    package func path(of object: String) -> String? {
        if let p = paths[object] { return p }
        return object.contains("/") ? nil : ProgramPath.find(object)
    }

    /// The file name and line of addr2line's second line; nil when unknown.
    package static func place(_ text: String) -> (String, Int)? {
        // "/src/ledger.c:57" or "/src/ledger.c:57 (discriminator 1)"
        let spot = text.split(separator: " ").first.map(String.init) ?? text
        guard let colon = spot.lastIndex(of: ":"), let line = Int(spot[spot.index(after: colon)...]), line > 0 else { return nil }
        let file = (String(spot[..<colon]) as NSString).lastPathComponent
        return file == "??" ? nil : (file, line)
    }

    /// Stack frames with their symbol and file:line where the object's debug information (its
    /// own, or the separate file addr2line would find: by build-id under /usr/lib/debug, or by
    /// .gnu_debuglink) tells, and their function where the symbol tables have one that contains
    /// the address. The function is the symbol's, where addr2line -f named the innermost
    /// function of the debug information: for inlined code that is the function it was inlined
    /// into, not the inlined one whose file:line is shown. (Without a containing symbol a
    /// frame keeps object+offset: the nearest symbol before it, which addr2line would name,
    /// can be some other, static function.) `lines: false`: the functions only, no line table read.
    package static func symbolize(_ frames: [StackFrame], lines: Bool = true) -> [StackFrame] {
        var out = frames
        for (path, indices) in Dictionary(grouping: frames.indices, by: { frames[$0].object }) {
            guard let object = ObjectDebugInfo(path: path) else { continue }
            // A return address: the call is the instruction before it.
            let wanted = indices.compactMap { k in
                object.segments.address(ofFileOffset: frames[k].offset &- (frames[k].isReturnAddress ? 1 : 0)).map { (k, $0) }
            }
            guard !wanted.isEmpty else { continue }
            let addresses = wanted.map(\.1)
            let places = lines ? object.places(of: addresses) ?? addr2linePlaces(path, addresses) : [:]
            let functions = object.functions
            for (k, address) in wanted {
                if let place = places[address], place.line > 0 {
                    out[k].file = place.file
                    out[k].line = place.line
                }
                out[k].symbol = functions.containing(address)
            }
        }
        return out
    }

    /// The places addr2line gives, for an object the reader here cannot read.
    static func addr2linePlaces(_ path: String, _ addresses: [UInt64]) -> [UInt64: SourcePlace] {
        guard let tool = addr2line else { return [:] }
        let lines = run(tool, ["-e", path] + addresses.map { "0x" + String($0, radix: 16) })
        guard lines.count == addresses.count else { return [:] }
        var out: [UInt64: SourcePlace] = [:]
        for (address, text) in zip(addresses, lines) {
            if let (file, line) = place(text) { out[address] = SourcePlace(file: file, line: line) }
        }
        return out
    }

    static let addr2line: String? = ["/usr/bin/addr2line", "/bin/addr2line"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// The tool's output lines; none when it failed.
    static func run(_ tool: String, _ arguments: [String]) -> [String] {
        guard let r = try? Subprocess.run(tool, arguments), r.status == 0 else { return [] }
        return lines(r.stdout)
    }

    /// A tool's output as lines (what follows the last newline is not one).
    static func lines(_ data: Data) -> [String] {
        String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }
}
