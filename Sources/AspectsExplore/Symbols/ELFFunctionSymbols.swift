/// An object's function symbols with their sizes, from its symbol tables (`.symtab`, the
/// debug file's `.symtab`, `.dynsym`): which function contains an address, if any. What `nm -S
/// --defined-only` listed as t, T, w, W or i with a size: functions (and ifuncs), and sized
/// symbols of executable sections (assembly's). Names without `@VERSION`; C++ names demangled.
package struct ELFFunctionSymbols {
    package struct Symbol {
        package var start, end: UInt64
        package var name: String
        /// STB_LOCAL 0, STB_GLOBAL 1, STB_WEAK 2
        var binding: UInt8 = 1

        func isPreferred(to other: Symbol) -> Bool {
            func key(_ s: Symbol) -> (Int, Int, Int, String) {
                (s.name.utf8.prefix { $0 == 0x5f }.count, s.binding == 1 ? 0 : s.binding == 2 ? 1 : 2, s.name.utf8.count, s.name)
            }
            return key(self) < key(other)
        }
    }
    package let symbols: [Symbol]

    static let sttNotype: UInt8 = 0, sttObject: UInt8 = 1, sttFunc: UInt8 = 2, sttGnuIfunc: UInt8 = 10

    /// The symbols of `files`' symbol tables. Of the aliases of one function (one start and
    /// size: glibc's `getdelim`, `__getdelim`, `__GI___getdelim`) the name a user calls it by:
    /// the fewest leading underscores, then global before weak before local, then the shortest.
    init(files: [ELFFile]) {
        var all: [Symbol] = []
        for file in files {
            for table in file.sections where table.type == ELFFile.shtSymtab || table.type == ELFFile.shtDynsym {
                all += Self.functions(in: table, of: file)
            }
        }
        all.sort { ($0.start, $0.end) < ($1.start, $1.end) }
        var unique: [Symbol] = []
        for s in all {
            if let last = unique.last, last.start == s.start, last.end == s.end {
                if s.isPreferred(to: last) { unique[unique.count - 1] = s }
            } else {
                unique.append(s)
            }
        }
        symbols = unique.map { Symbol(start: $0.start, end: $0.end, name: CxxDemangler.demangle($0.name)) }
    }

    static func functions(in table: ELFFile.Section, of file: ELFFile) -> [Symbol] {
        guard table.entrySize == 24, Int(table.link) < file.sections.count, let entries = try? file.contents(of: table) else { return [] }
        let strings = file.sections[Int(table.link)]
        guard let names = try? file.contents(of: strings) else { return [] }
        let sections = file.sections
        var out: [Symbol] = []
        entries.withUnsafeBytes { e in
            names.withUnsafeBytes { n in
                var c = ByteCursor(e)
                while let name = c.u32(), let info = c.u8(), c.skip(1), let shndx = c.u16(), let value = c.u64(), let size = c.u64() {
                    // defined in a section of this file (not UNDEF, ABS, COMMON, XINDEX), with a size
                    guard shndx != 0, shndx < 0xff00, Int(shndx) < sections.count, size > 0 else { continue }
                    let type = info & 0xf
                    let executable = sections[Int(shndx)].flags & ELFFile.shfExecinstr != 0
                    guard type == sttFunc || type == sttGnuIfunc || (executable && (type == sttNotype || type == sttObject)) else {
                        continue
                    }
                    guard var bytes = ByteCursor.cString(in: n, at: Int(name)), !bytes.isEmpty else { continue }
                    // name@VERSION, and gcc's clones (`f.cold`, `f.part.0`, `f.isra.0`, `f.constprop.0`):
                    // the function's own name, as its debug information (and addr2line -f) says
                    if let at = bytes.firstIndex(where: { $0 == 0x40 || $0 == 0x2e }), at > 0 {
                        bytes = UnsafeRawBufferPointer(rebasing: bytes[..<at])
                    }
                    out.append(Symbol(start: value, end: value &+ size, name: String(decoding: bytes, as: UTF8.self), binding: info >> 4))
                }
            }
        }
        return out
    }

    package func containing(_ address: UInt64) -> String? {
        var lo = 0
        var hi = symbols.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if symbols[mid].start <= address { lo = mid + 1 } else { hi = mid }
        }
        // symbols can nest (a local label's size inside its function): the nearest start that still contains it
        return symbols[..<lo].last { address < $0.end }?.name
    }
}
