/// A source place as addr2line's second line gives it, reduced to what sites show: the file's
/// last path component and the line.
package struct SourcePlace: Equatable, Sendable {
    package var file: String
    package var line: Int

    package init(file: String, line: Int) {
        self.file = file
        self.line = line
    }
}

/// Reads `.debug_line` (DWARF 2 to 5, 32- and 64-bit) for a set of addresses: each gets the row
/// of the greatest address not above it within a sequence that contains it — among rows of one
/// address, the last, as binutils keeps — which is the file and line addr2line prints. Nothing
/// else of the debug information is read (`.debug_info` is most of a debug file, and most of
/// addr2line's time). What it cannot read throws: the caller falls back to addr2line.
package struct DWARFLineTable {
    package enum Failure: Error, Equatable {
        /// lengths or offsets outside the section, a header cut short or impossible
        case malformed(String)
        /// valid DWARF this reader does not read (dwz's alternate strings, VLIW op indices …)
        case unsupported(String)
    }

    /// the sections the line programs refer to
    let line: UnsafeRawBufferPointer
    let lineStrings: UnsafeRawBufferPointer?
    let strings: UnsafeRawBufferPointer?

    package init(line: UnsafeRawBufferPointer, lineStrings: UnsafeRawBufferPointer?, strings: UnsafeRawBufferPointer?) {
        (self.line, self.lineStrings, self.strings) = (line, lineStrings, strings)
    }

    /// The place of each of `addresses` that a line program covers (line 0, "no source line",
    /// included as the table says it).
    package func places(of addresses: [UInt64]) throws(Failure) -> [UInt64: SourcePlace] {
        var lookup = Lookup(wanted: Array(Set(addresses)).sorted())
        guard !lookup.wanted.isEmpty else { return [:] }
        var offset = 0
        while offset < line.count, lookup.claimed.count < lookup.wanted.count {
            offset = try unit(at: offset, into: &lookup)
        }
        return lookup.found
    }

    /// The addresses wanted and the places found so far; rows come in one at a time. A unit's
    /// rows are kept by file number until its program ends, and its file table is read only
    /// then, and only when one of its rows was wanted.
    struct Lookup {
        let wanted: [UInt64]
        var found: [UInt64: SourcePlace] = [:]
        /// the current unit's rows for wanted addresses: (address, file number, line)
        var pending: [(address: UInt64, file: UInt64, line: Int64)] = []
        var claimed: Set<UInt64> = []

        /// Gives [low, high) the row of `file` and `line` unless an earlier sequence gave it one.
        mutating func cover(_ low: UInt64, _ high: UInt64, file: UInt64, line: Int64) {
            guard low < high, let last = wanted.last, low <= last, high > wanted[0] else { return }
            var lo = 0
            var hi = wanted.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if wanted[mid] < low { lo = mid + 1 } else { hi = mid }
            }
            while lo < wanted.count, wanted[lo] < high {
                if claimed.insert(wanted[lo]).inserted { pending.append((wanted[lo], file, line)) }
                lo += 1
            }
        }
    }

    struct Header {
        var version: UInt16
        var minimumInstructionLength: UInt64
        var lineBase: Int64
        var lineRange: UInt64
        var opcodeBase: UInt8
        var standardOpcodeLengths: [UInt8]
        /// where the directory and file tables start, read only when a row is wanted
        var tables: Int
        /// the files DW_LNE_define_file added, after the table's
        var defined: [UnsafeRawBufferPointer] = []
    }

    /// Runs the line program of the unit at `start`; returns where the next unit starts.
    func unit(at start: Int, into lookup: inout Lookup) throws(Failure) -> Int {
        var c = ByteCursor(line, at: start)
        guard var length = c.u32().map(UInt64.init) else { throw .malformed("a unit length past the end of .debug_line") }
        var offsetSize = 4
        if length == 0xffff_ffff {
            guard let l = c.u64() else { throw .malformed("a 64-bit unit length past the end of .debug_line") }
            (length, offsetSize) = (l, 8)
        } else if length >= 0xffff_fff0 {
            throw .malformed("a reserved unit length \(length) at offset \(start)")
        }
        guard length <= UInt64(c.remaining) else {
            throw .malformed("the line program at offset \(start) is \(length) bytes, past the end of .debug_line")
        }
        let end = c.offset + Int(length)
        c = ByteCursor(UnsafeRawBufferPointer(rebasing: line[..<end]), at: c.offset)
        var header = try self.header(&c, offsetSize: offsetSize, unit: start)
        lookup.pending.removeAll(keepingCapacity: true)
        try run(&c, header: &header, into: &lookup)
        guard !lookup.pending.isEmpty else { return end }
        var tables = c
        tables.offset = header.tables
        let files =
            try (header.version >= 5 ? filesV5(&tables, offsetSize: offsetSize, unit: start) : filesV2(&tables, unit: start))
            + header.defined
        let fileBase: UInt64 = header.version >= 5 ? 0 : 1
        for (address, file, line) in lookup.pending {
            // a file number outside the table, or a name-less entry: addr2line's "??"
            guard file >= fileBase, file - fileBase < UInt64(files.count), line >= 0, line <= Int64(Int32.max) else { continue }
            let name = files[Int(file - fileBase)]
            guard !name.isEmpty else { continue }
            lookup.found[address] = SourcePlace(file: String(decoding: name, as: UTF8.self), line: Int(line))
        }
        return end
    }

    func header(_ c: inout ByteCursor, offsetSize: Int, unit: Int) throws(Failure) -> Header {
        guard let version = c.u16() else { throw .malformed("a line program header cut short at offset \(unit)") }
        guard (2...5).contains(version) else { throw .unsupported("line program version \(version) at offset \(unit)") }
        if version >= 5 {
            guard let addressSize = c.u8(), c.u8() != nil else { throw .malformed("a line program header cut short at offset \(unit)") }
            guard addressSize == 4 || addressSize == 8 else { throw .unsupported("address size \(addressSize)") }
        }
        guard let headerLength = c.uint(offsetSize), headerLength <= UInt64(c.remaining) else {
            throw .malformed("a header length past its line program at offset \(unit)")
        }
        let programStart = c.offset + Int(headerLength)
        // default_is_stmt is skipped: see negate_stmt in `run`
        guard let minimumInstructionLength = c.u8(), let maxOps = version >= 4 ? c.u8() : 1, c.u8() != nil, let lineBase = c.u8(),
            let lineRange = c.u8(), let opcodeBase = c.u8()
        else { throw .malformed("a line program header cut short at offset \(unit)") }
        guard maxOps == 1 else { throw .unsupported("\(maxOps) operations per instruction (VLIW) at offset \(unit)") }
        guard lineRange > 0 else { throw .malformed("a line range of 0 at offset \(unit)") }
        guard opcodeBase > 0 else { throw .malformed("an opcode base of 0 at offset \(unit)") }
        var lengths: [UInt8] = []
        for _ in 1..<opcodeBase {
            guard let n = c.u8() else { throw .malformed("standard opcode lengths cut short at offset \(unit)") }
            lengths.append(n)
        }
        let tables = c.offset
        c.offset = programStart
        return Header(
            version: version, minimumInstructionLength: UInt64(minimumInstructionLength),
            lineBase: Int64(Int8(bitPattern: lineBase)), lineRange: UInt64(lineRange), opcodeBase: opcodeBase,
            standardOpcodeLengths: lengths, tables: tables)
    }

    /// DWARF 2–4: include directories, then file entries (name, directory, time, size), each
    /// list ended by an empty string. File 1 is the first entry.
    func filesV2(_ c: inout ByteCursor, unit: Int) throws(Failure) -> [UnsafeRawBufferPointer] {
        while true {
            guard let directory = c.cString() else { throw .malformed("include directories cut short at offset \(unit)") }
            if directory.isEmpty { break }
        }
        var files: [UnsafeRawBufferPointer] = []
        while true {
            guard let name = c.cString() else { throw .malformed("file names cut short at offset \(unit)") }
            if name.isEmpty { break }
            guard c.uleb() != nil, c.uleb() != nil, c.uleb() != nil else { throw .malformed("a file entry cut short at offset \(unit)") }
            files.append(Self.lastComponent(name))
        }
        return files
    }

    /// DWARF 5: the directory and file tables, each described by (content, form) pairs. File 0
    /// is the first entry.
    func filesV5(_ c: inout ByteCursor, offsetSize: Int, unit: Int) throws(Failure) -> [UnsafeRawBufferPointer] {
        var files: [UnsafeRawBufferPointer] = []
        for table in 0..<2 {
            guard let formatCount = c.u8() else { throw .malformed("an entry format cut short at offset \(unit)") }
            var format: [(content: UInt64, form: UInt64)] = []
            for _ in 0..<formatCount {
                guard let content = c.uleb(), let form = c.uleb() else { throw .malformed("an entry format cut short at offset \(unit)") }
                format.append((content, form))
            }
            guard let count = c.uleb() else { throw .malformed("an entry count cut short at offset \(unit)") }
            // each entry takes at least a byte unless its format is empty
            guard count <= UInt64(c.remaining) || format.isEmpty else {
                throw .malformed("\(count) entries past the line program at offset \(unit)")
            }
            for _ in 0..<min(count, UInt64(c.remaining) + 1) {
                var name: UnsafeRawBufferPointer?
                for (content, form) in format {
                    let value = try self.form(form, &c, offsetSize: offsetSize, unit: unit)
                    if content == 1 { name = value }  // DW_LNCT_path
                }
                if table == 1 { files.append(Self.lastComponent(name ?? UnsafeRawBufferPointer(start: nil, count: 0))) }
            }
        }
        return files
    }

    /// Reads one attribute value of a DWARF 5 entry; a string form's bytes, nil for the others.
    func form(_ form: UInt64, _ c: inout ByteCursor, offsetSize: Int, unit: Int) throws(Failure) -> UnsafeRawBufferPointer? {
        func skip(_ n: UInt64?) throws(Failure) {
            guard let n, n <= UInt64(c.remaining), c.skip(Int(n)) else {
                throw .malformed("an entry's value past its line program at offset \(unit)")
            }
        }
        func string(_ section: UnsafeRawBufferPointer?, _ name: String) throws(Failure) -> UnsafeRawBufferPointer {
            guard let o = c.uint(offsetSize) else { throw .malformed("an entry's value past its line program at offset \(unit)") }
            guard let section, o < UInt64(section.count), let s = ByteCursor.cString(in: section, at: Int(o)) else {
                throw .malformed("a string offset \(o) outside \(name) at offset \(unit)")
            }
            return s
        }
        switch form {
        case 0x08:  // DW_FORM_string
            guard let s = c.cString() else { throw .malformed("an unterminated string at offset \(unit)") }
            return s
        case 0x1f: return try string(lineStrings, ".debug_line_str")  // DW_FORM_line_strp
        case 0x0e: return try string(strings, ".debug_str")  // DW_FORM_strp
        case 0x0b: try skip(1)  // data1
        case 0x05: try skip(2)  // data2
        case 0x06: try skip(4)  // data4
        case 0x07: try skip(8)  // data8
        case 0x1e: try skip(16)  // data16 (the MD5 of clang's tables)
        case 0x0f, 0x0d:  // udata, sdata
            guard c.uleb() != nil else { throw .malformed("a LEB128 past its line program at offset \(unit)") }
        case 0x09: try skip(c.uleb())  // block
        case 0x0a: try skip(c.uint(1))  // block1
        case 0x03: try skip(c.uint(2))  // block2
        case 0x04: try skip(c.uint(4))  // block4
        default:
            // strx (needs the unit's .debug_str_offsets base, from .debug_info), dwz's
            // GNU_strp_alt and strp_sup (another file's strings), anything newer
            throw .unsupported("form 0x\(String(form, radix: 16)) in a file table at offset \(unit)")
        }
        return nil
    }

    static func lastComponent(_ path: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        guard let slash = path.lastIndex(of: 0x2f) else { return path }
        return UnsafeRawBufferPointer(rebasing: path[(slash + 1)...])
    }

    /// The line number program: rows by the state machine of DWARF 5 §6.2 (and 2–4, its subsets).
    func run(_ c: inout ByteCursor, header: inout Header, into lookup: inout Lookup) throws(Failure) {
        var address: UInt64 = 0
        var file: UInt64 = 1
        var line: Int64 = 1
        // the row being extended: it covers addresses up to the next row's
        var current: (address: UInt64, file: UInt64, line: Int64)?
        func row(end: Bool) {
            if let cur = current, address > cur.address {
                lookup.cover(cur.address, address, file: cur.file, line: cur.line)
            }
            current = end ? nil : (address, file, line)
        }
        func reset() { (address, file, line) = (0, 1, 1) }
        let cut = Failure.malformed("an opcode's operands past the end of the line program")
        let minimum = header.minimumInstructionLength
        let base = header.opcodeBase
        let range = header.lineRange
        while let op = c.u8() {
            if op >= base {
                let adjusted = UInt64(op - base)
                address = address &+ minimum &* (adjusted / range)
                line = line &+ header.lineBase &+ Int64(adjusted % range)
                row(end: false)
                continue
            }
            switch op {
            case 0:
                guard let length = c.uleb(), length > 0, length <= UInt64(c.remaining), let sub = c.u8() else { throw cut }
                let operands = Int(length) - 1
                switch sub {
                case 1:  // DW_LNE_end_sequence
                    row(end: true)
                    reset()
                case 2:  // DW_LNE_set_address
                    guard operands >= 1, operands <= 8, let a = c.uint(operands) else { throw cut }
                    address = a
                case 3:  // DW_LNE_define_file (DWARF 2–4)
                    let next = c.offset + operands
                    guard let name = c.cString() else { throw cut }
                    header.defined.append(Self.lastComponent(name))
                    c.offset = next
                default:  // DW_LNE_set_discriminator and vendors' ones
                    guard c.skip(operands) else { throw cut }
                }
            case 1: row(end: false)  // DW_LNS_copy
            case 2:  // DW_LNS_advance_pc
                guard let n = c.uleb() else { throw cut }
                address = address &+ minimum &* n
            case 3:  // DW_LNS_advance_line
                guard let n = c.sleb() else { throw cut }
                line = line &+ n
            case 4:  // DW_LNS_set_file
                guard let n = c.uleb() else { throw cut }
                file = n
            case 8:  // DW_LNS_const_add_pc
                address = address &+ minimum &* (UInt64(255 - base) / range)
            case 9:  // DW_LNS_fixed_advance_pc
                guard let n = c.u16() else { throw cut }
                address = address &+ UInt64(n)
            // negate_stmt, basic_block, prologue_end, epilogue_begin: a row counts whatever its
            // is_stmt, as addr2line's lookups (binutils', LLVM's) take it
            case 6, 7, 10, 11: break
            default:  // set_column, set_isa, and opcodes of later versions: skip their ULEB128 operands
                for _ in 0..<header.standardOpcodeLengths[Int(op) - 1] {
                    guard c.uleb() != nil else { throw cut }
                }
            }
        }
    }
}
