import AspectsExplore
import Foundation
import Testing

/// The symbolizer's ELF and DWARF readers on files made here byte by byte: a small valid object
/// is read right, and every broken form of it — truncated anywhere, offsets outside the file,
/// a line program longer than its section, a compression it cannot inflate, random bytes —
/// gives "cannot symbolize" (nil: addr2line is asked) or nothing, never a crash or a hang.
@Suite(.tags(.fast)) struct SymbolsHostileInputTests {
    /// A fresh directory of this test's own, removed at the end of the test.
    final class Scratch {
        let path = NSTemporaryDirectory() + "aspects-symbols-\(UUID().uuidString)"
        init() throws { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }
        deinit { try? FileManager.default.removeItem(atPath: path) }

        func write(_ bytes: [UInt8], _ name: String = "object") throws -> String {
            let file = path + "/" + name
            try Data(bytes).write(to: URL(fileURLWithPath: file))
            return file
        }
    }

    static func le(_ v: UInt64, _ n: Int) -> [UInt8] { (0..<n).map { UInt8(truncatingIfNeeded: v >> (8 * UInt64($0))) } }
    static func uleb(_ v: UInt64) -> [UInt8] {
        var v = v
        var out: [UInt8] = []
        repeat {
            let b = UInt8(v & 0x7f)
            v >>= 7
            out.append(v == 0 ? b : b | 0x80)
        } while v != 0
        return out
    }

    /// A DWARF 4 line program for a.c: 0x1000–0x1003 line 10, 0x1004–0x100f line 12, ending
    /// at 0x1010.
    static func lineProgram(lineRange: UInt8 = 14, lengthSlack: Int = 0) -> [UInt8] {
        let lengths: [UInt8] = [0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1]
        let header: [UInt8] = [1, 1, 1, 0xfb, lineRange, 13] + lengths + [0] + Array("a.c".utf8) + [0, 0, 0, 0] + [0]
        let program: [UInt8] = [0, 9, 2] + le(0x1000, 8) + [3, 9, 1] + [2, 4, 3, 2, 1] + [2, 12, 0, 1, 1]
        let afterLength = le(4, 2) + le(UInt64(header.count), 4) + header + program
        return le(UInt64(afterLength.count + lengthSlack), 4) + afterLength
    }

    /// The same rows in DWARF 5 over a file table of a.c and b.c whose names have `nameForm`
    /// (DW_FORM_string, or another a reader may not know). Rows use file 1: b.c, as DWARF 5
    /// numbers files from 0.
    static func lineProgramV5(nameForm: UInt8 = 0x08) -> [UInt8] {
        let lengths: [UInt8] = [0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1]
        func name(_ n: String, index: UInt8) -> [UInt8] { nameForm == 0x08 ? Array(n.utf8) + [0] : [index] }
        var header: [UInt8] = [1, 1, 1, 0xfb, 14, 13] + lengths
        header += [1, 1, 0x08, 1] + Array("/src".utf8) + [0]  // directories: (path, string), one
        header += [2, 1, nameForm, 2, 0x0f, 2] + name("a.c", index: 0) + [0] + name("b.c", index: 1) + [0]  // files: (path, dir), two
        let program: [UInt8] = [0, 9, 2] + le(0x1000, 8) + [3, 9, 1] + [2, 4, 3, 2, 1] + [2, 12, 0, 1, 1]
        let afterLength = le(5, 2) + [8, 0] + le(UInt64(header.count), 4) + header + program
        return le(UInt64(afterLength.count), 4) + afterLength
    }

    static let expected: [UInt64: SourcePlace] = [
        0x1000: SourcePlace(file: "a.c", line: 10), 0x1003: SourcePlace(file: "a.c", line: 10),
        0x1004: SourcePlace(file: "a.c", line: 12), 0x100f: SourcePlace(file: "a.c", line: 12),
    ]
    static let probes: [UInt64] = [0xfff, 0x1000, 0x1003, 0x1004, 0x100f, 0x1010]

    struct Section {
        var name: String
        var type: UInt32 = 1  // PROGBITS
        var flags: UInt64 = 0
        var bytes: [UInt8]
        var offset: UInt64? = nil  // where the header says it is (default: where it is)
    }

    /// An ELF64 object: its header, one PT_LOAD of the first 64 KiB at address 0, the
    /// sections, their name table, the section headers.
    static func elf(_ sections: [Section]) -> [UInt8] {
        var names: [UInt8] = [0]
        var body: [UInt8] = []
        let dataStart = 64 + 56
        var headers: [UInt8] = [UInt8](repeating: 0, count: 64)
        for s in sections {
            let nameOffset = names.count
            names += Array(s.name.utf8) + [0]
            let offset = s.offset ?? UInt64(dataStart + body.count)
            body += s.bytes
            headers +=
                le(UInt64(nameOffset), 4) + le(UInt64(s.type), 4) + le(s.flags, 8) + le(0, 8) + le(offset, 8)
                + le(UInt64(s.bytes.count), 8) + le(0, 4) + le(0, 4) + le(1, 8) + le(0, 8)
        }
        let shstrtabName = names.count
        names += Array(".shstrtab".utf8) + [0]
        let namesOffset = dataStart + body.count
        body += names
        headers +=
            le(UInt64(shstrtabName), 4) + le(3, 4) + le(0, 8) + le(0, 8) + le(UInt64(namesOffset), 8)
            + le(UInt64(names.count), 8) + le(0, 4) + le(0, 4) + le(1, 8) + le(0, 8)
        let shoff = dataStart + body.count
        let count = sections.count + 2
        var header: [UInt8] = [0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0] + [UInt8](repeating: 0, count: 8)
        header += le(3, 2) + le(62, 2) + le(1, 4) + le(0, 8) + le(64, 8) + le(UInt64(shoff), 8) + le(0, 4)
        header += le(64, 2) + le(56, 2) + le(1, 2) + le(64, 2) + le(UInt64(count), 2) + le(UInt64(count - 1), 2)
        let load = le(1, 4) + le(5, 4) + le(0, 8) + le(0, 8) + le(0, 8) + le(0x10000, 8) + le(0x10000, 8) + le(0x1000, 8)
        return header + load + body + headers
    }

    /// A zlib stream holding `bytes` in stored (uncompressed) blocks, with its Adler-32.
    static func zlibStored(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var chunks = stride(from: 0, to: bytes.count, by: 0xffff).map { Array(bytes[$0..<min($0 + 0xffff, bytes.count)]) }
        if chunks.isEmpty { chunks = [[]] }
        for (i, chunk) in chunks.enumerated() {
            out.append(i == chunks.count - 1 ? 1 : 0)
            out += le(UInt64(chunk.count), 2) + le(UInt64(~UInt16(chunk.count)), 2) + chunk
        }
        var a: UInt32 = 1
        var b: UInt32 = 0
        for byte in bytes {
            a = (a + UInt32(byte)) % 65521
            b = (b + a) % 65521
        }
        let adler = b << 16 | a
        return out + [UInt8(adler >> 24), UInt8(adler >> 16 & 0xff), UInt8(adler >> 8 & 0xff), UInt8(adler & 0xff)]
    }

    /// A SHF_COMPRESSED section: Elf64_Chdr (type, size, alignment), then the stream.
    static func compressed(_ bytes: [UInt8], type: UInt32 = 1, claimedSize: UInt64? = nil) -> Section {
        Section(
            name: ".debug_line", flags: 0x800,
            bytes: le(UInt64(type), 4) + le(0, 4) + le(claimedSize ?? UInt64(bytes.count), 8) + le(1, 8) + zlibStored(bytes))
    }

    static func places(_ bytes: [UInt8], in scratch: Scratch) throws -> [UInt64: SourcePlace]? {
        let object = try #require(ObjectDebugInfo(path: try scratch.write(bytes), debugDirectory: scratch.path + "/none"))
        return object.places(of: probes)
    }

    @Test func aSmallObjectIsReadRight() throws {
        let scratch = try Scratch()
        #expect(try Self.places(Self.elf([Section(name: ".debug_line", bytes: Self.lineProgram())]), in: scratch) == Self.expected)
        // the same section compressed (zlib, as gcc -gz writes it)
        #expect(try Self.places(Self.elf([Self.compressed(Self.lineProgram())]), in: scratch) == Self.expected)
    }

    @Test func dwarf5NumbersFilesFromZero() throws {
        let places = try Self.lineProgramV5().withUnsafeBytes {
            try DWARFLineTable(line: $0, lineStrings: nil, strings: nil).places(of: Self.probes)
        }
        #expect(places == Self.expected.mapValues { SourcePlace(file: "b.c", line: $0.line) })
    }

    /// DW_FORM_strx1 names a string through .debug_str_offsets, which needs the unit's base
    /// from .debug_info: not read here, so addr2line is asked.
    @Test func aFormItDoesNotKnowFallsBack() throws {
        #expect(throws: DWARFLineTable.Failure.self) {
            try Self.lineProgramV5(nameForm: 0x25).withUnsafeBytes {
                try DWARFLineTable(line: $0, lineStrings: nil, strings: nil).places(of: Self.probes)
            }
        }
        let scratch = try Scratch()
        #expect(try Self.places(Self.elf([Section(name: ".debug_line", bytes: Self.lineProgramV5(nameForm: 0x25))]), in: scratch) == nil)
    }

    @Test func aCompressionItCannotReadFallsBack() throws {
        let scratch = try Scratch()
        // ELFCOMPRESS_ZSTD
        #expect(try Self.places(Self.elf([Self.compressed(Self.lineProgram(), type: 2)]), in: scratch) == nil)
        // a size past what zlib can expand to, and a size the stream does not fill
        #expect(try Self.places(Self.elf([Self.compressed(Self.lineProgram(), claimedSize: 1 << 40)]), in: scratch) == nil)
        #expect(try Self.places(Self.elf([Self.compressed(Self.lineProgram(), claimedSize: 4096)]), in: scratch) == nil)
        // a broken checksum
        var broken = Self.compressed(Self.lineProgram())
        broken.bytes[broken.bytes.count - 1] ^= 0xff
        #expect(try Self.places(Self.elf([broken]), in: scratch) == nil)
    }

    @Test func offsetsOutsideTheFileFallBack() throws {
        let scratch = try Scratch()
        #expect(try Self.places(Self.elf([Section(name: ".debug_line", bytes: Self.lineProgram(), offset: 1 << 20)]), in: scratch) == nil)
        #expect(
            try Self.places(Self.elf([Section(name: ".debug_line", bytes: Self.lineProgram(), offset: UInt64.max - 8)]), in: scratch) == nil
        )
        // a section header table past the end: the segments still map offsets (CrashStack
        // needs them), with nothing to name an address by
        var bad = Self.elf([Section(name: ".debug_line", bytes: Self.lineProgram())])
        bad.replaceSubrange(0x28..<0x30, with: Self.le(UInt64(bad.count + 64), 8))
        let object = try #require(ObjectDebugInfo(path: try scratch.write(bad), debugDirectory: scratch.path + "/none"))
        #expect(object.segments.address(ofFileOffset: 0x1000) == 0x1000)
        #expect(object.places(of: Self.probes) == [:])
        #expect(object.functions.symbols.isEmpty)
        // an ELF header that is not one (32-bit here): no object
        var elf32 = Self.elf([])
        elf32[4] = 1
        #expect(ObjectDebugInfo(path: try scratch.write(elf32, "elf32"), debugDirectory: scratch.path + "/none") == nil)
    }

    @Test func aLineProgramLongerThanItsSectionFallsBack() throws {
        let program = Self.lineProgram(lengthSlack: 1)
        #expect(throws: DWARFLineTable.Failure.self) {
            try program.withUnsafeBytes { try DWARFLineTable(line: $0, lineStrings: nil, strings: nil).places(of: Self.probes) }
        }
        let scratch = try Scratch()
        #expect(try Self.places(Self.elf([Section(name: ".debug_line", bytes: program)]), in: scratch) == nil)
    }

    @Test func aLineRangeOfZeroFallsBack() {
        #expect(throws: DWARFLineTable.Failure.self) {
            try Self.lineProgram(lineRange: 0).withUnsafeBytes {
                try DWARFLineTable(line: $0, lineStrings: nil, strings: nil).places(of: Self.probes)
            }
        }
    }

    /// Every non-empty prefix of the line program throws (its length says more than there is); every
    /// prefix of the whole file gives no object or no wrong place.
    @Test func truncatedAnywhereIsNeverACrash() throws {
        let program = Self.lineProgram()
        for n in 1..<program.count {
            #expect(throws: DWARFLineTable.Failure.self) {
                try Array(program[..<n]).withUnsafeBytes {
                    try DWARFLineTable(line: $0, lineStrings: nil, strings: nil).places(of: Self.probes)
                }
            }
        }
        let scratch = try Scratch()
        let file = Self.elf([Self.compressed(program)])
        for n in 0..<file.count {
            let path = try scratch.write(Array(file[..<n]), "cut")
            guard let object = ObjectDebugInfo(path: path, debugDirectory: scratch.path + "/none") else { continue }
            let places = object.places(of: Self.probes)
            #expect(places == nil || places == [:] || places == Self.expected, "cut at \(n)")
            _ = object.functions.containing(0x1000)
        }
    }

    /// Random bytes changed in the object and in the line program: whatever comes out, the
    /// readers return.
    @Test func randomDamageIsNeverACrash() throws {
        var rng = SeededGenerator(seed: 0x5eed)
        let program = Self.lineProgram()
        for _ in 0..<20_000 {
            var damaged = program
            for _ in 0...(rng.next() % 4) { damaged[Int(rng.next() % UInt64(damaged.count))] = UInt8(truncatingIfNeeded: rng.next()) }
            _ = try? damaged.withUnsafeBytes { try DWARFLineTable(line: $0, lineStrings: nil, strings: nil).places(of: Self.probes) }
        }
        let scratch = try Scratch()
        let file = Self.elf([Self.compressed(program), Section(name: ".gnu_debuglink", bytes: Array("x.debug".utf8) + [0] + Self.le(7, 4))])
        var read = 0
        for _ in 0..<1_000 {
            var damaged = file
            for _ in 0...(rng.next() % 4) { damaged[Int(rng.next() % UInt64(damaged.count))] = UInt8(truncatingIfNeeded: rng.next()) }
            guard let object = ObjectDebugInfo(path: try scratch.write(damaged, "damaged"), debugDirectory: scratch.path + "/none") else {
                continue
            }
            read += 1
            _ = object.places(of: Self.probes)
            _ = object.functions.containing(0x1000)
        }
        #expect(read > 0)
    }

    /// Sites name an object by its real file's name; the loader by its link's.
    @Test func anObjectIsFoundByItsLinkAndItsRealName() throws {
        let scratch = try Scratch()
        let real = try scratch.write(Self.elf([]), "libx.so.1.2.3")
        let link = scratch.path + "/libx.so.1"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "libx.so.1.2.3")
        let symbolizer = SiteSymbolizer(objects: [link])
        #expect(symbolizer.path(of: "libx.so.1") == link)
        #expect(symbolizer.path(of: "libx.so.1.2.3") == link)
        _ = real
    }
}
