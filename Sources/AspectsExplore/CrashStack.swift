import CAspectsABI
import Foundation
import AspectsCore
import AspectsRules

/// One frame of a crashed thread's stack: the object (its path) and the file offset of the
/// instruction — the crashing one for the first frame, a return address for the others —
/// with the symbol and source line once symbolized (`SiteSymbolizer.symbolize`).
package struct StackFrame: Sendable, Hashable {
    package var object: String
    package var offset: UInt64
    /// A return address: the call is the instruction before it (what a symbolizer looks up).
    package var isReturnAddress: Bool
    package var symbol: String?
    package var file: String?
    package var line: Int?

    package init(object: String, offset: UInt64, isReturnAddress: Bool, symbol: String? = nil, file: String? = nil, line: Int? = nil) {
        self.object = object
        self.offset = offset
        self.isReturnAddress = isReturnAddress
        self.symbol = symbol
        self.file = file
        self.line = line
    }

    /// The object's file name and offset, as call sites are written: `libc.so.6+0x8a1b3`.
    package var site: CallSite { CallSite(object: (object as NSString).lastPathComponent, offset: offset) }

    /// `nss_database.c:402 (__nss_database_get) libc.so.6+0x13c0a2`, whatever is known.
    package var description: String {
        var s = ""
        if let file, let line { s += "\(file):\(line) " }
        if let symbol { s += s.isEmpty ? "\(symbol) " : "(\(symbol)) " }
        return s + site.description
    }
}

/// Reads the stack the crash recorder left for a process (crash.c: DIR/crash-PID.stack, laid out
/// as aspects_crash.h says, and DIR/crash-PID.maps) and unwinds it here, after the fact, by the
/// architecture the dump names — not this machine's: an x86-64 aspectctl reads the dumps of
/// aarch64 programs run under qemu, and the files can be copied. The interrupted PC, then frame
/// by frame with each object's call frame information (.eh_frame, which distro libraries keep
/// even without frame pointers, read by `readelf --debug-dump=frames-interp`); where an object
/// has none for the address, on aarch64 the frame records the code keeps ([x29] the caller's
/// x29, [x29+8] the return address); and last (hand-written assembly, no readelf) a scan up
/// the stack to the next word that points just after a call instruction in an executable
/// mapping. A scanned frame can be a stale return address left in a local variable, which is
/// why bugs are told apart by their top frames only.
package enum CrashStack {
    /// At most this many frames.
    package static let maxFrames = 48

    struct Mapping {
        var start, end, offset: UInt64
        var path: String
    }

    /// What unwinding needs to know of one architecture; the dump's machine word picks it.
    package struct Architecture: Sendable {
        /// Where a frame's return address is.
        enum ReturnAddress: Sendable {
            /// pushed by the call, just below the caller's stack pointer: [CFA-8] (x86-64)
            case belowCFA
            /// where the rules' `ra` column saved it; unsaved, still in the link register,
            /// which only the first frame knows (aarch64: a leaf function never saves x30)
            case raColumn
        }
        package let machine: UInt32
        /// readelf's names of the stack pointer and frame pointer, the registers a CFA is
        /// computed from (the frame pointer's name is also its column).
        let stackPointer: String, framePointer: String
        let returnAddress: ReturnAddress
        /// The rule at a function's entry, which an FDE without rows keeps from its CIE.
        let entryRow: CallFrameInfo.Row
        /// The bits of a saved return address that are the address. aarch64: the 48-bit
        /// virtual address; above it a return address signed by pointer authentication
        /// carries its signature.
        let addressMask: UInt64
        /// Whether code keeps frame records at the frame pointer (AAPCS64), walked where an
        /// object has no call frame information for an address.
        let keepsFrameRecords: Bool
        /// Whether the instruction that ends where `before(k)` is the k-th byte back is a call.
        let endsCall: @Sendable (_ before: (Int) -> UInt8) -> Bool

        package static let x86_64 = Architecture(
            machine: ASPECTS_ELF_MACHINE_X86_64, stackPointer: "rsp", framePointer: "rbp", returnAddress: .belowCFA,
            entryRow: CallFrameInfo.Row(location: 0, register: .stackPointer, offset: 8),
            addressMask: ~0, keepsFrameRecords: false, endsCall: CodeBytes.x86EndsCall)
        package static let aarch64 = Architecture(
            machine: ASPECTS_ELF_MACHINE_AARCH64, stackPointer: "sp", framePointer: "x29", returnAddress: .raColumn,
            entryRow: CallFrameInfo.Row(location: 0, register: .stackPointer, offset: 0),
            addressMask: 0x0000_FFFF_FFFF_FFFF, keepsFrameRecords: true, endsCall: CodeBytes.aarch64EndsCall)

        /// The architecture of an ELF machine number; nil for one not unwound here.
        package static func of(machine: UInt64) -> Architecture? {
            [x86_64, aarch64].first { UInt64($0.machine) == machine }
        }

        /// A word read as a code address: without a pointer-authentication signature.
        func codeAddress(_ word: UInt64) -> UInt64 { word & addressMask }
    }

    /// The registers an unwinding step goes from and to. `lr`: the link register while it
    /// still holds the first frame's return address; nil after.
    package struct Registers {
        var pc, sp: UInt64
        var fp, lr: UInt64?

        /// Whether `next` is a frame further out: higher on the stack, or at the same stack
        /// pointer with the link register used up (a leaf function's caller). Each step must
        /// climb, so a walk ends whatever the dump holds.
        func climbs(to next: Registers) -> Bool {
            next.sp > sp || (next.sp == sp && lr != nil && next.lr == nil)
        }
    }

    /// The frames of `pid`'s crash in `directory`; empty when the recorder left none.
    package static func read(directory: String, pid: Int32) -> [StackFrame] {
        let base = directory + "/crash-\(pid)"
        guard let stack = FileManager.default.contents(atPath: base + ".stack"),
              let maps = FileManager.default.contents(atPath: base + ".maps") else { return [] }
        return frames(stack: [UInt8](stack), maps: String(decoding: maps, as: UTF8.self))
    }

    /// The stack file (aspects_crash.h): the header's words, then the stack from SP up.
    package struct Dump {
        let bytes: [UInt8]
        package let architecture: Architecture
        static let headerBytes = 8 * ASPECTS_CRASH_HEADER_WORDS
        package var pc: UInt64 { word(ASPECTS_CRASH_WORD_PC) }
        package var sp: UInt64 { word(ASPECTS_CRASH_WORD_SP) }
        package var fp: UInt64 { word(ASPECTS_CRASH_WORD_FP) }
        package var lr: UInt64 { word(ASPECTS_CRASH_WORD_LR) }
        /// The stack as copied starts at SP rounded down to 8 (crash.c).
        var base: UInt64 { sp & ~7 }

        /// nil for a file that is not a dump of this layout, or of a machine not unwound here.
        package init?(_ bytes: [UInt8]) {
            guard bytes.count >= Self.headerBytes, Array(bytes[0..<8]) == Array(ASPECTS_CRASH_STACK_MAGIC.utf8),
                  let architecture = Architecture.of(machine: Self.word(bytes, 8 * ASPECTS_CRASH_WORD_MACHINE)) else { return nil }
            self.bytes = bytes
            self.architecture = architecture
        }

        static func word(_ bytes: [UInt8], _ at: Int) -> UInt64 { (0..<8).reduce(0) { $0 | UInt64(bytes[at + $1]) << (8 * $1) } }
        func word(_ index: Int) -> UInt64 { Self.word(bytes, 8 * index) }

        /// The registers at the crash.
        var registers: Registers { Registers(pc: pc, sp: sp, fp: fp, lr: lr == 0 ? nil : lr) }

        /// The stack word at `address`; nil outside the copy.
        func stack(_ address: UInt64) -> UInt64? {
            guard bytes.count >= Self.headerBytes + 8, address >= base, address - base <= UInt64(bytes.count - Self.headerBytes - 8) else { return nil }
            return Self.word(bytes, Self.headerBytes + Int(address - base))
        }
    }

    package static func frames(stack: [UInt8], maps: String) -> [StackFrame] {
        guard let dump = Dump(stack) else { return [] }
        let mappings = executableMappings(maps)
        var code = CodeBytes()
        var frames: [StackFrame] = []
        var regs = dump.registers, isReturn = false
        while frames.count < maxFrames, let m = mapping(of: regs.pc, in: mappings) {
            let offset = regs.pc - m.start &+ m.offset
            frames.append(StackFrame(object: m.path, offset: offset, isReturnAddress: isReturn))
            func leadsOn(_ next: Registers?) -> Registers? {
                guard let next, mapping(of: next.pc, in: mappings) != nil, regs.climbs(to: next) else { return nil }
                return next
            }
            if let next = leadsOn(CallFrameInfo.step(path: m.path, fileOffset: offset &- (isReturn ? 1 : 0), from: regs, dump: dump))
                ?? leadsOn(frameRecord(from: regs, dump: dump)) {
                regs = next
            } else if let (address, ra) = scan(from: regs.sp, dump: dump, mappings: mappings, code: &code) {
                regs = Registers(pc: ra, sp: address &+ 8, fp: regs.fp, lr: nil)
            } else {
                break
            }
            isReturn = true
        }
        return frames
    }

    /// The caller's registers from the frame record at the frame pointer (AAPCS64: [fp] the
    /// caller's frame pointer, [fp+8] the return address), on an architecture that keeps
    /// them. Only a record inside the copied stack, at or above the stack pointer, whose
    /// caller's record is higher still (or 0, the outermost): a walk of them only climbs.
    /// (Wrapping arithmetic here and in the scan: the file's words are untrusted, and an
    /// address that wraps falls outside the copy, or fails to climb, and ends the walk.)
    static func frameRecord(from regs: Registers, dump: Dump) -> Registers? {
        guard dump.architecture.keepsFrameRecords, let fp = regs.fp, fp >= regs.sp, fp & 7 == 0,
              let callerFP = dump.stack(fp), let ra = dump.stack(fp &+ 8), callerFP == 0 || callerFP > fp else { return nil }
        return Registers(pc: dump.architecture.codeAddress(ra), sp: fp &+ 16, fp: callerFP == 0 ? nil : callerFP, lr: nil)
    }

    /// The next stack word from `sp` up that is a return address: its address and value.
    static func scan(from sp: UInt64, dump: Dump, mappings: [Mapping], code: inout CodeBytes) -> (UInt64, UInt64)? {
        var at = (sp &+ 7) & ~7
        while let word = dump.stack(at) {
            let w = dump.architecture.codeAddress(word)
            if let m = mapping(of: w, in: mappings),
               code.followsCall(path: m.path, offset: w - m.start &+ m.offset, architecture: dump.architecture) { return (at, w) }
            at &+= 8
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

        /// Whether the instruction that ends at `offset` in `path` is a call of `architecture`:
        /// what makes a stack word a return address rather than a function pointer or stale data.
        mutating func followsCall(path: String, offset: UInt64, architecture: CrashStack.Architecture) -> Bool {
            if files[path] == nil {
                files[path] = (try? Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped)) ?? Data()
            }
            let data = files[path]!
            guard offset >= 8, offset <= UInt64(data.count) else { return false }
            let o = Int(offset) + data.startIndex
            return architecture.endsCall { data[o - $0] }
        }

        /// x86-64: call rel32, or call r/m64 (FF /2, 2 to 7 bytes with its ModRM, SIB and
        /// displacement).
        @Sendable static func x86EndsCall(_ b: (Int) -> UInt8) -> Bool {
            if b(5) == 0xE8 { return true }
            for k in 2...7 where b(k) == 0xFF {
                let modrm = b(k - 1)
                guard modrm & 0x38 == 0x10 else { continue }
                if callLength(modrm: modrm, sib: k >= 3 ? b(k - 2) : 0) == k { return true }
            }
            return false
        }

        /// aarch64: BL or BLR, the 4-byte little-endian instruction before.
        @Sendable static func aarch64EndsCall(_ b: (Int) -> UInt8) -> Bool {
            let ins = UInt32(b(4)) | UInt32(b(3)) << 8 | UInt32(b(2)) << 16 | UInt32(b(1)) << 24
            return ins & 0xFC00_0000 == 0x9400_0000 || ins & 0xFFFF_FC1F == 0xD63F_0000
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

/// Call frame information of the objects, as `readelf --debug-dump=frames-interp` tabulates
/// it: per address range, how to find the canonical frame address (CFA: the stack or frame
/// pointer plus an offset) and where the return address and the caller's frame pointer were
/// saved, in the register names of the object's architecture. Read once per object per
/// aspectctl process.
package enum CallFrameInfo {
    package struct Row: Sendable {
        package enum Register: Sendable { case stackPointer, framePointer }
        package var location: UInt64
        /// nil: a rule not followed here (an expression, another register)
        package var register: Register?
        package var offset: Int64
        /// where the frame pointer was saved, relative to the CFA; nil: unchanged
        package var savedFP: Int64? = nil
        /// where the `ra` column says the return address was saved, relative to the CFA; nil: not saved
        package var savedRA: Int64? = nil
    }
    package struct Entry {
        package var start, end: UInt64
        package var rows: [Row]
    }
    package struct Table {
        package var entries: [Entry]
        package var segments: ELFLoadSegments?
        package var architecture: CrashStack.Architecture

        package func row(at address: UInt64) -> Row? {
            var lo = 0, hi = entries.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if entries[mid].start <= address { lo = mid + 1 } else { hi = mid }
            }
            guard lo > 0, address < entries[lo - 1].end else { return nil }
            let e = entries[lo - 1]
            var entry = architecture.entryRow
            entry.location = e.start
            return e.rows.last { $0.location <= address } ?? entry
        }
    }

    package final class Cache: @unchecked Sendable {
        package let lock = NSLock()
        package var tables: [String: Table] = [:]
    }
    package static let cache = Cache()

    package static func table(_ path: String, architecture: CrashStack.Architecture) -> Table {
        let key = "\(architecture.machine):\(path)"
        cache.lock.lock()
        defer { cache.lock.unlock() }
        if let t = cache.tables[key] { return t }
        let output = readelf.flatMap { try? Subprocess.run($0, ["--debug-dump=frames-interp", path]).stdout } ?? Data()
        let t = Table(
            entries: parse(output: [UInt8](output), architecture: architecture), segments: ELFLoadSegments(path: path),
            architecture: architecture)
        cache.tables[key] = t
        return t
    }

    package static let readelf: String? = ["/usr/bin/readelf", "/bin/readelf"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// readelf's tables: `... FDE cie=... pc=START..END`, a `LOC CFA … ra` heading, rows.
    package static func parse(_ lines: [String], architecture: CrashStack.Architecture) -> [Entry] {
        parse(output: Array(lines.map { $0 + "\n" }.joined().utf8), architecture: architecture)
    }

    /// The same from readelf's output as it came. Read as bytes, fields as ranges of them:
    /// libc's table is 33,000 lines, and taking each line apart as Strings cost a campaign
    /// hundreds of ms of CPU at its first crash (a python3 campaign: a third of aspectctl's).
    package static func parse(output: [UInt8], architecture: CrashStack.Architecture) -> [Entry] {
        let stackPointer = Array(architecture.stackPointer.utf8)
        let framePointer = Array(architecture.framePointer.utf8)
        var entries: [Entry] = []
        return output.withUnsafeBufferPointer { text -> [Entry] in
            // the current table's heading, and where its frame pointer and return address are
            var columns: [Range<Int>] = []
            var fpColumn: Int?
            var raColumn: Int?
            var fields: [Range<Int>] = []
            let fde = Array("FDE".utf8)
            let loc = Array("LOC".utf8)
            let ra = Array("ra".utf8)
            let pcPrefix = Array("pc=".utf8)
            func equal(_ field: Range<Int>, _ word: [UInt8]) -> Bool {
                field.count == word.count && zip(field, word).allSatisfy { text[$0] == $1 }
            }
            // `c-16`: the saved register's offset from the CFA
            func saved(_ column: Int?) -> Int64? {
                guard let k = column, text[fields[k].lowerBound] == UInt8(ascii: "c") else { return nil }
                return decimal(text, fields[k].dropFirst())
            }
            var lineStart = 0
            // (a last line without its newline is not read: readelf was cut short there)
            while lineStart < text.count {
                var lineEnd = lineStart
                while lineEnd < text.count && text[lineEnd] != UInt8(ascii: "\n") { lineEnd += 1 }
                if lineEnd == text.count { break }
                defer { lineStart = lineEnd + 1 }
                fields.removeAll(keepingCapacity: true)
                var i = lineStart
                while i < lineEnd {
                    while i < lineEnd && text[i] == UInt8(ascii: " ") { i += 1 }
                    let start = i
                    while i < lineEnd && text[i] != UInt8(ascii: " ") { i += 1 }
                    if i > start { fields.append(start..<i) }
                }
                if fields.count >= 4, equal(fields[3], fde),
                    let pc = fields.last(where: { $0.count >= 3 && equal($0.prefix(3), pcPrefix) }),
                    let range = pcRange(text, pc.dropFirst(3))
                {
                    entries.append(Entry(start: range.0, end: range.1, rows: []))
                    columns = []
                } else if let first = fields.first, equal(first, loc) {
                    columns = fields
                    fpColumn = fields.firstIndex { equal($0, framePointer) }
                    raColumn = fields.firstIndex { equal($0, ra) }
                } else if !entries.isEmpty, !columns.isEmpty, fields.count == columns.count, let loc = hex(text, fields[0]) {
                    let cfa = fields[1]
                    var row = Row(location: loc, register: nil, offset: 0)
                    if let plus = cfa.first(where: { text[$0] == UInt8(ascii: "+") }), let off = decimal(text, (plus + 1)..<cfa.upperBound)
                    {
                        let name = cfa.lowerBound..<plus
                        if equal(name, stackPointer) {
                            row.register = .stackPointer
                        } else if equal(name, framePointer) {
                            row.register = .framePointer
                        }
                        row.offset = off
                    }
                    row.savedFP = saved(fpColumn)
                    row.savedRA = saved(raColumn)
                    entries[entries.count - 1].rows.append(row)
                }
            }
            return entries.sorted { $0.start < $1.start }
        }
    }

    /// `START..END` in hex (empty parts between the dots do not count, as String.split has it).
    static func pcRange(_ text: UnsafeBufferPointer<UInt8>, _ field: Range<Int>) -> (UInt64, UInt64)? {
        var parts: [Range<Int>] = []
        var start = field.lowerBound
        for i in field where text[i] == UInt8(ascii: ".") {
            if i > start { parts.append(start..<i) }
            start = i + 1
        }
        if field.upperBound > start { parts.append(start..<field.upperBound) }
        guard parts.count == 2, let a = hex(text, parts[0]), let b = hex(text, parts[1]) else { return nil }
        return (a, b)
    }

    /// A hex number as `UInt64(_:radix: 16)` reads it: an optional sign, then digits.
    static func hex(_ text: UnsafeBufferPointer<UInt8>, _ field: Range<Int>) -> UInt64? {
        number(text, field, radix: 16).flatMap { $0.negative ? ($0.magnitude == 0 ? 0 : nil) : $0.magnitude }
    }

    /// A decimal number as `Int64(_:)` reads it: an optional sign, then digits.
    static func decimal(_ text: UnsafeBufferPointer<UInt8>, _ field: Range<Int>) -> Int64? {
        guard let (negative, magnitude) = number(text, field, radix: 10) else { return nil }
        if negative { return magnitude <= UInt64(Int64.max) + 1 ? Int64(truncatingIfNeeded: 0 &- magnitude) : nil }
        return magnitude <= UInt64(Int64.max) ? Int64(magnitude) : nil
    }

    static func number(_ text: UnsafeBufferPointer<UInt8>, _ field: Range<Int>, radix: UInt64) -> (negative: Bool, magnitude: UInt64)? {
        var i = field.lowerBound
        var negative = false
        if i < field.upperBound, text[i] == UInt8(ascii: "+") || text[i] == UInt8(ascii: "-") {
            negative = text[i] == UInt8(ascii: "-")
            i += 1
        }
        guard i < field.upperBound else { return nil }
        var value: UInt64 = 0
        while i < field.upperBound {
            let c = text[i]
            let digit: UInt64
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt64(c - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): digit = UInt64(c - UInt8(ascii: "a")) + 10
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): digit = UInt64(c - UInt8(ascii: "A")) + 10
            default: return nil
            }
            guard digit < radix else { return nil }
            let (times, o1) = value.multipliedReportingOverflow(by: radix)
            let (sum, o2) = times.addingReportingOverflow(digit)
            guard !o1, !o2 else { return nil }
            value = sum
            i += 1
        }
        return (negative, value)
    }

    /// The caller's registers, from the frame at `fileOffset` in `path` (the instruction, or a
    /// return address less one) with the registers `regs`; nil when the rules do not say.
    package static func step(path: String, fileOffset: UInt64, from regs: CrashStack.Registers, dump: CrashStack.Dump) -> CrashStack.Registers? {
        let arch = dump.architecture
        let t = table(path, architecture: arch)
        guard let address = t.segments?.address(ofFileOffset: fileOffset), let row = t.row(at: address), let reg = row.register else { return nil }
        let base: UInt64
        switch reg {
        case .stackPointer: base = regs.sp
        case .framePointer: guard let fp = regs.fp else { return nil }; base = fp
        }
        let cfa = UInt64(bitPattern: Int64(bitPattern: base) &+ row.offset)
        func at(_ offset: Int64) -> UInt64? { dump.stack(UInt64(bitPattern: Int64(bitPattern: cfa) &+ offset)) }
        let saved: UInt64?
        switch arch.returnAddress {
        case .belowCFA: saved = dump.stack(cfa &- 8)
        case .raColumn:
            if let offset = row.savedRA { saved = at(offset) } else { saved = regs.lr }
        }
        guard let ra = saved.map(arch.codeAddress), ra != 0 else { return nil }
        var callerFP = regs.fp
        if let offset = row.savedFP { callerFP = at(offset) }
        return CrashStack.Registers(pc: ra, sp: cfa, fp: callerFP, lr: nil)
    }
}
