import Foundation

/// The parts of an ELF64 little-endian file that symbolizing needs — section headers and
/// names, program headers, section contents — read with pread, so a file is never copied
/// whole and one truncated under us reads short (nil) instead of faulting. Every offset and
/// size the file states is checked against its size: nil means "cannot read", never a trap.
final class ELFFile {
    struct Section {
        var name: String
        var type: UInt32
        var flags: UInt64
        var address: UInt64
        var offset: UInt64
        var size: UInt64
        var link: UInt32
        var entrySize: UInt64
    }
    struct ProgramHeader {
        var type: UInt32
        var offset, address, fileSize, memorySize: UInt64
    }

    static let shtSymtab: UInt32 = 2
    static let shtNote: UInt32 = 7
    static let shtNobits: UInt32 = 8
    static let shtDynsym: UInt32 = 11
    static let shfExecinstr: UInt64 = 0x4
    static let shfCompressed: UInt64 = 0x800
    /// Section and program header tables larger than this are not an object anyone built.
    static let maxHeaders = 1 << 16

    let path: String
    let size: UInt64
    let sections: [Section]
    let programHeaders: [ProgramHeader]
    private let fd: Int32

    init?(path: String) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        var st = stat()
        // a FIFO or a device would block or never end: regular files only
        guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG, st.st_size >= 64 else {
            close(fd)
            return nil
        }
        guard let parsed = Self.headers(fd: fd, size: UInt64(st.st_size)) else {
            close(fd)
            return nil
        }
        self.fd = fd
        self.path = path
        self.size = UInt64(st.st_size)
        (sections, programHeaders) = parsed
    }

    deinit { close(fd) }

    /// `count` bytes at `offset`, nil unless all of them are in the file and read.
    func read(at offset: UInt64, count: UInt64) -> [UInt8]? { Self.read(fd: fd, size: size, at: offset, count: count) }

    /// The first section of that name.
    func section(named name: String) -> Section? { sections.first { $0.name == name } }

    private static func read(fd: Int32, size: UInt64, at offset: UInt64, count: UInt64) -> [UInt8]? {
        guard offset <= size, count <= size - offset else { return nil }
        if count == 0 { return [] }
        let n = Int(count)
        var done = 0
        let bytes = [UInt8](unsafeUninitializedCapacity: n) { buffer, initialized in
            while done < n {
                let r = pread(fd, buffer.baseAddress! + done, n - done, off_t(offset) + off_t(done))
                if r < 0, errno == EINTR { continue }
                guard r > 0 else { break }
                done += r
            }
            initialized = done
        }
        return done == n ? bytes : nil
    }

    private static func headers(fd: Int32, size: UInt64) -> ([Section], [ProgramHeader])? {
        guard let h = read(fd: fd, size: size, at: 0, count: 64) else { return nil }
        // ELF, 64-bit, little-endian, version 1: what aspects runs on (x86-64, aarch64)
        guard h[0] == 0x7f, h[1] == 0x45, h[2] == 0x4c, h[3] == 0x46, h[4] == 2, h[5] == 1 else { return nil }
        return h.withUnsafeBytes { raw -> ([Section], [ProgramHeader])? in
            var c = ByteCursor(raw, at: 0x20)
            guard let phoff = c.u64(), let shoff = c.u64() else { return nil }
            c.offset = 0x36
            guard let phentsize = c.u16(), let phnum = c.u16(), let shentsize = c.u16(), let shnum = c.u16().map(UInt64.init),
                let shstrndx = c.u16().map(UInt32.init)
            else { return nil }
            var programHeaders: [ProgramHeader] = []
            if phnum > 0 {
                guard phentsize >= 56, let table = read(fd: fd, size: size, at: phoff, count: UInt64(phentsize) * UInt64(phnum)) else {
                    return nil
                }
                table.withUnsafeBytes { t in
                    for i in 0..<Int(phnum) {
                        var e = ByteCursor(t, at: i * Int(phentsize))
                        guard let type = e.u32(), e.skip(4), let offset = e.u64(), let address = e.u64(), e.skip(8),
                            let fileSize = e.u64(), let memorySize = e.u64()
                        else { return }
                        programHeaders.append(
                            ProgramHeader(type: type, offset: offset, address: address, fileSize: fileSize, memorySize: memorySize))
                    }
                }
            }
            // section headers that cannot be read (a stripped-down or lying table) leave the
            // segments: sites still map to addresses, with nothing to name them by
            return (
                sections(fd: fd, size: size, shoff: shoff, shentsize: shentsize, shnum: shnum, shstrndx: shstrndx) ?? [], programHeaders
            )
        }
    }

    private static func sections(fd: Int32, size: UInt64, shoff: UInt64, shentsize: UInt16, shnum: UInt64, shstrndx: UInt32) -> [Section]? {
        var (shnum, shstrndx) = (shnum, shstrndx)
        guard shoff != 0 else { return [] }
        guard shentsize >= 64 else { return nil }
        // more than 0xff00 sections, or a name table past 0xff00: the real values are in section 0
        if shnum == 0 || shstrndx == 0xffff {
            guard let zero = read(fd: fd, size: size, at: shoff, count: 64) else { return nil }
            zero.withUnsafeBytes { s in
                var e = ByteCursor(s, at: 32)
                if shnum == 0, let n = e.u64() { shnum = n }
                e.offset = 40
                if shstrndx == 0xffff, let l = e.u32() { shstrndx = l }
            }
        }
        guard shnum > 0, shnum <= UInt64(maxHeaders),
            let table = read(fd: fd, size: size, at: shoff, count: UInt64(shentsize) * shnum)
        else { return nil }
        var raw: [(nameOffset: UInt32, section: Section)] = []
        table.withUnsafeBytes { t in
            for i in 0..<Int(shnum) {
                var e = ByteCursor(t, at: i * Int(shentsize))
                guard let name = e.u32(), let type = e.u32(), let flags = e.u64(), let address = e.u64(), let offset = e.u64(),
                    let size = e.u64(), let link = e.u32(), e.skip(4 + 8), let entrySize = e.u64()
                else { return }
                raw.append(
                    (
                        name,
                        Section(
                            name: "", type: type, flags: flags, address: address, offset: offset, size: size, link: link,
                            entrySize: entrySize)
                    ))
            }
        }
        guard raw.count == Int(shnum), Int(shstrndx) < raw.count else { return nil }
        let names = raw[Int(shstrndx)].section
        guard names.type != shtNobits, let strings = read(fd: fd, size: size, at: names.offset, count: names.size) else { return nil }
        let sections = strings.withUnsafeBytes { s in
            raw.map { entry -> Section in
                var section = entry.section
                section.name = ByteCursor.cString(in: s, at: Int(entry.nameOffset)).map { String(decoding: $0, as: UTF8.self) } ?? ""
                return section
            }
        }
        return sections
    }
}
