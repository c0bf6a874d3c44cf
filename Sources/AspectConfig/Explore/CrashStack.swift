import Foundation

/// One frame of a crashed thread's stack: the object (its path) and the file offset of the
/// instruction — the crashing one for the first frame, a return address for the others —
/// with the symbol and source line once symbolized (`SiteSymbolizer.symbolize`).
public struct StackFrame: Sendable, Hashable {
    public var object: String
    public var offset: UInt64
    /// A return address: the call is the instruction before it (what a symbolizer looks up).
    public var isReturnAddress: Bool
    public var symbol: String?
    public var file: String?
    public var line: Int?

    public init(object: String, offset: UInt64, isReturnAddress: Bool, symbol: String? = nil, file: String? = nil, line: Int? = nil) {
        self.object = object
        self.offset = offset
        self.isReturnAddress = isReturnAddress
        self.symbol = symbol
        self.file = file
        self.line = line
    }

    /// The object's file name and offset, as call sites are written: `libc.so.6+0x8a1b3`.
    public var site: CallSite { CallSite(object: (object as NSString).lastPathComponent, offset: offset) }

    /// `nss_database.c:402 (__nss_database_get) libc.so.6+0x13c0a2`, whatever is known.
    public var description: String {
        var s = ""
        if let file, let line { s += "\(file):\(line) " }
        if let symbol { s += s.isEmpty ? "\(symbol) " : "(\(symbol)) " }
        return s + site.description
    }
}

/// Reads the stack the crash recorder left for a process (crash.c: DIR/crash-PID.stack and
/// DIR/crash-PID.maps) and unwinds it here, after the fact: the interrupted PC, then frame by
/// frame with each object's call frame information (.eh_frame, which distro libraries keep
/// even without frame pointers, read by `readelf --debug-dump=frames-interp`), and where an
/// object has none for the address (hand-written assembly, no readelf) by scanning up the stack
/// to the next word that points just after a call instruction in an executable mapping. A
/// scanned frame can be a stale return address left in a local variable, which is why bugs
/// are told apart by their top frames only.
public enum CrashStack {
    /// At most this many frames.
    static let maxFrames = 48

    struct Mapping {
        var start, end, offset: UInt64
        var path: String
    }

    /// The frames of `pid`'s crash in `directory`; empty when the recorder left none.
    public static func read(directory: String, pid: Int32) -> [StackFrame] {
        let base = directory + "/crash-\(pid)"
        guard let stack = FileManager.default.contents(atPath: base + ".stack"),
              let maps = FileManager.default.contents(atPath: base + ".maps") else { return [] }
        return frames(stack: [UInt8](stack), maps: String(decoding: maps, as: UTF8.self))
    }

    /// The stack file's words: the registers, then the stack from SP up.
    struct Dump {
        let bytes: [UInt8]
        var pc: UInt64 { word(8) }
        var sp: UInt64 { word(16) }
        var fp: UInt64 { word(24) }
        /// The stack as copied starts at SP rounded down to 8 (crash.c).
        var base: UInt64 { sp & ~7 }

        init?(_ bytes: [UInt8]) {
            guard bytes.count >= 32, Array(bytes[0..<8]) == Array("ASPSTK1\n".utf8) else { return nil }
            self.bytes = bytes
        }

        func word(_ at: Int) -> UInt64 { (0..<8).reduce(0) { $0 | UInt64(bytes[at + $1]) << (8 * $1) } }

        /// The stack word at `address`; nil outside the copy.
        func stack(_ address: UInt64) -> UInt64? {
            guard bytes.count >= 40, address >= base, address - base <= UInt64(bytes.count - 40) else { return nil }
            return word(32 + Int(address - base))
        }
    }

    static func frames(stack: [UInt8], maps: String) -> [StackFrame] {
        guard let dump = Dump(stack) else { return [] }
        let mappings = executableMappings(maps)
        var code = CodeBytes()
        var frames: [StackFrame] = []
        var pc = dump.pc, sp = dump.sp, fp: UInt64? = dump.fp, isReturn = false
        while frames.count < maxFrames, let m = mapping(of: pc, in: mappings) {
            let offset = pc - m.start + m.offset
            frames.append(StackFrame(object: m.path, offset: offset, isReturnAddress: isReturn))
            if let step = CallFrameInfo.step(path: m.path, fileOffset: offset &- (isReturn ? 1 : 0), sp: sp, fp: fp, dump: dump),
               mapping(of: step.pc, in: mappings) != nil, step.sp > sp {
                (pc, sp, fp) = (step.pc, step.sp, step.fp)
            } else if let (address, ra) = scan(from: sp, dump: dump, mappings: mappings, code: &code) {
                (pc, sp) = (ra, address + 8)
            } else {
                break
            }
            isReturn = true
        }
        return frames
    }

    /// The next stack word from `sp` up that is a return address: its address and value.
    static func scan(from sp: UInt64, dump: Dump, mappings: [Mapping], code: inout CodeBytes) -> (UInt64, UInt64)? {
        var at = (sp + 7) & ~7
        while let w = dump.stack(at) {
            if let m = mapping(of: w, in: mappings), code.followsCall(path: m.path, offset: w - m.start + m.offset) { return (at, w) }
            at += 8
        }
        return nil
    }

    /// The executable mappings of files in a /proc/PID/maps text.
    static func executableMappings(_ maps: String) -> [Mapping] {
        maps.split(separator: "\n").compactMap { line in
            let f = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
            guard f.count == 6, f[1].count == 4, Array(f[1])[2] == "x" else { return nil }
            let path = f[5].trimmingCharacters(in: .whitespaces)
            let range = f[0].split(separator: "-")
            guard path.hasPrefix("/"), range.count == 2, let start = UInt64(range[0], radix: 16),
                  let end = UInt64(range[1], radix: 16), let offset = UInt64(f[2], radix: 16), start < end else { return nil }
            return Mapping(start: start, end: end, offset: offset, path: path)
        }
    }

    static func mapping(of address: UInt64, in mappings: [Mapping]) -> Mapping? {
        mappings.first { address >= $0.start && address < $0.end }
    }

    /// The bytes before a file offset, from the objects themselves (mapped once each).
    struct CodeBytes {
        var files: [String: Data] = [:]

        /// Whether the instruction that ends at `offset` in `path` is a call: what makes a
        /// stack word a return address rather than a function pointer or stale data.
        mutating func followsCall(path: String, offset: UInt64) -> Bool {
            if files[path] == nil {
                files[path] = (try? Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped)) ?? Data()
            }
            let data = files[path]!
            guard offset >= 8, offset <= UInt64(data.count) else { return false }
            let o = Int(offset) + data.startIndex
            func b(_ back: Int) -> UInt8 { data[o - back] }
            #if arch(arm64)
            let ins = UInt32(b(4)) | UInt32(b(3)) << 8 | UInt32(b(2)) << 16 | UInt32(b(1)) << 24
            return ins & 0xFC00_0000 == 0x9400_0000 || ins & 0xFFFF_FC1F == 0xD63F_0000 // BL, BLR
            #else
            if b(5) == 0xE8 { return true } // call rel32
            // call r/m64: FF /2, 2 to 7 bytes with its ModRM, SIB and displacement
            for k in 2...7 where b(k) == 0xFF {
                let modrm = b(k - 1)
                guard modrm & 0x38 == 0x10 else { continue }
                if Self.callLength(modrm: modrm, sib: k >= 3 ? b(k - 2) : 0) == k { return true }
            }
            return false
            #endif
        }

        /// The length of `FF /2` with this ModRM (and SIB) byte.
        static func callLength(modrm: UInt8, sib: UInt8) -> Int {
            let mod = modrm >> 6, rm = modrm & 7
            if mod == 3 { return 2 }
            var n = 2
            if rm == 4 { n += 1 } // SIB
            switch mod {
            case 0: if rm == 5 || (rm == 4 && sib & 7 == 5) { n += 4 }
            case 1: n += 1
            default: n += 4
            }
            return n
        }
    }
}

/// Call frame information of the objects (x86-64), as `readelf --debug-dump=frames-interp`
/// tabulates it: per address range, how to find the canonical frame address (CFA: a register
/// plus an offset) and where the return address and the caller's frame pointer were saved.
/// Read once per object per aspectctl process.
enum CallFrameInfo {
    struct Row {
        var location: UInt64
        /// "rsp" or "rbp"; nil: a rule not followed here (an expression, another register)
        var register: String?
        var offset: Int64
        /// where rbp was saved, relative to the CFA; nil: unchanged
        var savedFP: Int64?
    }
    struct Entry {
        var start, end: UInt64
        var rows: [Row]
    }
    struct Table {
        var entries: [Entry]
        var segments: ELFLoadSegments?

        func row(at address: UInt64) -> Row? {
            var lo = 0, hi = entries.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if entries[mid].start <= address { lo = mid + 1 } else { hi = mid }
            }
            guard lo > 0, address < entries[lo - 1].end else { return nil }
            let e = entries[lo - 1]
            // An entry with no rows keeps the CIE's rule for a function's entry: CFA = rsp+8.
            return e.rows.last { $0.location <= address } ?? Row(location: e.start, register: "rsp", offset: 8, savedFP: nil)
        }
    }

    final class Cache: @unchecked Sendable {
        let lock = NSLock()
        var tables: [String: Table] = [:]
    }
    static let cache = Cache()

    static func table(_ path: String) -> Table {
        cache.lock.lock()
        defer { cache.lock.unlock() }
        if let t = cache.tables[path] { return t }
        let t = Table(entries: readelf.map { parse(SiteSymbolizer.run($0, ["--debug-dump=frames-interp", path], anyStatus: true)) } ?? [],
                      segments: ELFLoadSegments(path: path))
        cache.tables[path] = t
        return t
    }

    static let readelf: String? = ["/usr/bin/readelf", "/bin/readelf"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// readelf's tables: `... FDE cie=... pc=START..END`, a `LOC CFA … ra` heading, rows.
    static func parse(_ lines: [String]) -> [Entry] {
        var entries: [Entry] = [], columns: [Substring] = []
        for line in lines {
            let f = line.split(separator: " ", omittingEmptySubsequences: true)
            if f.count >= 4, f[3] == "FDE", let range = f.last(where: { $0.hasPrefix("pc=") })?.dropFirst(3).split(separator: "."),
               range.count == 2, let start = UInt64(range[0], radix: 16), let end = UInt64(range[1], radix: 16) {
                entries.append(Entry(start: start, end: end, rows: []))
                columns = []
            } else if f.first == "LOC" {
                columns = f
            } else if !entries.isEmpty, !columns.isEmpty, f.count == columns.count, let loc = UInt64(f[0], radix: 16) {
                let cfa = f[1]
                var row = Row(location: loc, register: nil, offset: 0, savedFP: nil)
                if let plus = cfa.firstIndex(of: "+"), let off = Int64(cfa[cfa.index(after: plus)...]) {
                    let reg = String(cfa[..<plus])
                    if reg == "rsp" || reg == "rbp" { row.register = reg; row.offset = off }
                }
                if let k = columns.firstIndex(of: "rbp"), f[k].hasPrefix("c") { row.savedFP = Int64(f[k].dropFirst()) }
                entries[entries.count - 1].rows.append(row)
            }
        }
        return entries.sorted { $0.start < $1.start }
    }

    /// The caller's PC, SP and frame pointer, from the frame at `fileOffset` in `path` (the
    /// instruction, or a return address less one); nil when the rules do not say.
    static func step(path: String, fileOffset: UInt64, sp: UInt64, fp: UInt64?, dump: CrashStack.Dump) -> (pc: UInt64, sp: UInt64, fp: UInt64?)? {
        #if arch(x86_64)
        let t = table(path)
        guard let address = t.segments?.address(ofFileOffset: fileOffset), let row = t.row(at: address), let reg = row.register else { return nil }
        let base: UInt64
        if reg == "rsp" { base = sp } else if let fp { base = fp } else { return nil }
        let cfa = UInt64(bitPattern: Int64(bitPattern: base) &+ row.offset)
        guard let ra = dump.stack(cfa &- 8), ra != 0 else { return nil }
        var callerFP = fp
        if let saved = row.savedFP { callerFP = dump.stack(UInt64(bitPattern: Int64(bitPattern: cfa) &+ saved)) }
        return (ra, cfa, callerFP)
        #else
        return nil
        #endif
    }
}
