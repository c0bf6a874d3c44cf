/// An object's function symbols with their sizes, from its symbol tables (`.symtab`, the
/// debug file's `.symtab`, `.dynsym`): which function contains an address, if any. What `nm -S
/// --defined-only` listed as t, T, w, W or i with a size: functions (and ifuncs), and sized
/// symbols of executable sections (assembly's). Names without `@VERSION` and gcc's clone
/// suffixes; C++ names demangled. A name is made only for the symbols asked about (libc's
/// debug file has thousands).
package struct ELFFunctionSymbols {
    package struct Symbol {
        package var start, end: UInt64
        package var name: String
    }

    /// A symbol as its table holds it: the name is an offset into that table's strings.
    struct Entry {
        var start, end: UInt64
        var table: Int32
        /// STB_LOCAL 0, STB_GLOBAL 1, STB_WEAK 2
        var binding: UInt8
        var name: UInt32
    }
    let entries: [Entry]
    /// each symbol table's string table
    let strings: [[UInt8]]

    static let sttNotype: UInt8 = 0, sttObject: UInt8 = 1, sttFunc: UInt8 = 2, sttGnuIfunc: UInt8 = 10

    /// The symbols of `files`' symbol tables. Of the aliases of one function (one start and
    /// size: glibc's `getdelim`, `__getdelim`, `__GI___getdelim`) the name a user calls it by:
    /// the fewest leading underscores, then global before weak before local, then the shortest.
    init(files: [ELFFile]) {
        var all: [Entry] = []
        var strings: [[UInt8]] = []
        for file in files {
            for table in file.sections where table.type == ELFFile.shtSymtab || table.type == ELFFile.shtDynsym {
                guard let (entries, names) = Self.functions(in: table, of: file, index: Int32(strings.count)) else { continue }
                all += entries
                strings.append(names)
            }
        }
        self.strings = strings
        all.sort { ($0.start, $0.end) < ($1.start, $1.end) }
        var unique: [Entry] = []
        for e in all {
            if let last = unique.last, last.start == e.start, last.end == e.end {
                if Self.key(e, strings) < Self.key(last, strings) { unique[unique.count - 1] = e }
            } else {
                unique.append(e)
            }
        }
        entries = unique
    }

    /// Smaller is the better name among aliases.
    static func key(_ e: Entry, _ strings: [[UInt8]]) -> (Int, Int, Int, String) {
        let name = Self.rawName(e, strings)
        return (
            name.prefix { $0 == 0x5f }.count, e.binding == 1 ? 0 : e.binding == 2 ? 1 : 2, name.count, String(decoding: name, as: UTF8.self)
        )
    }

    /// The name's bytes up to `@VERSION` or a gcc clone's suffix (`f.cold`, `f.part.0`,
    /// `f.isra.0`, `f.constprop.0`): the function's own name, as its debug information (and
    /// addr2line -f) says.
    static func rawName(_ e: Entry, _ strings: [[UInt8]]) -> ArraySlice<UInt8> {
        let table = strings[Int(e.table)]
        let start = Int(e.name)
        var end = start
        while end < table.count, table[end] != 0 { end += 1 }
        let name = table[start..<end]
        if let at = name.firstIndex(where: { $0 == 0x40 || $0 == 0x2e }), at > start { return table[start..<at] }
        return name
    }

    func name(_ e: Entry) -> String { CxxDemangler.demangle(String(decoding: Self.rawName(e, strings), as: UTF8.self)) }

    /// Every symbol with its name (for inspection; `containing` names only what it finds).
    package var symbols: [Symbol] { entries.map { Symbol(start: $0.start, end: $0.end, name: name($0)) } }

    static func functions(in table: ELFFile.Section, of file: ELFFile, index: Int32) -> ([Entry], [UInt8])? {
        guard table.entrySize == 24, Int(table.link) < file.sections.count, let bytes = try? file.contents(of: table) else { return nil }
        guard let names = try? file.contents(of: file.sections[Int(table.link)]) else { return nil }
        let sections = file.sections
        var out: [Entry] = []
        bytes.withUnsafeBytes { e in
            var c = ByteCursor(e)
            while let name = c.u32(), let info = c.u8(), c.skip(1), let shndx = c.u16(), let value = c.u64(), let size = c.u64() {
                // defined in a section of this file (not UNDEF, ABS, COMMON, XINDEX), with a size and a name
                guard shndx != 0, shndx < 0xff00, Int(shndx) < sections.count, size > 0, name > 0, Int(name) < names.count,
                    names[Int(name)] != 0
                else { continue }
                let type = info & 0xf
                let executable = sections[Int(shndx)].flags & ELFFile.shfExecinstr != 0
                guard type == sttFunc || type == sttGnuIfunc || (executable && (type == sttNotype || type == sttObject)) else {
                    continue
                }
                out.append(Entry(start: value, end: value &+ size, table: index, binding: info >> 4, name: name))
            }
        }
        return (out, names)
    }

    package func containing(_ address: UInt64) -> String? {
        var lo = 0
        var hi = entries.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if entries[mid].start <= address { lo = mid + 1 } else { hi = mid }
        }
        // symbols can nest (a local label's size inside its function): the nearest start that still contains it
        return entries[..<lo].last { address < $0.end }.map(name)
    }
}
