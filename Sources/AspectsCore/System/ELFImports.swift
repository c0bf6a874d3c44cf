import Foundation

/// The dynamic symbols an ELF object imports (undefined entries of .dynsym), read from the
/// file without loading it. 64-bit little-endian objects only (x86-64, aarch64).
package struct ELFImports: Sendable {
    package enum Problem: Error, Equatable, CustomStringConvertible {
        case unreadable(String)
        case notELF(String)
        case unsupported(String)
        package var description: String {
            switch self {
            case .unreadable(let p): return "cannot read \(p)"
            case .notELF(let p): return "\(p) is not an ELF file"
            case .unsupported(let p): return "\(p) is not a 64-bit little-endian ELF object"
            }
        }
    }

    package var path: String
    /// Imported symbol names (without version).
    package var imports: Set<String>
    /// Defined (exported) dynamic symbols.
    package var exports: Set<String>
    /// Whether the object has a dynamic section at all (a static executable has none; a
    /// static-pie has one, to relocate itself).
    package var isDynamic: Bool
    /// Whether it names a program interpreter (PT_INTERP): the dynamic loader, which alone
    /// loads LD_PRELOAD, runs only for executables that ask for it.
    package var hasInterpreter = false
    /// That interpreter's path, as the file names it; nil without one.
    package var interpreter: String?
    /// The ELF machine (e_machine: ASPECTS_ELF_MACHINE_X86_64, ASPECTS_ELF_MACHINE_AARCH64, ...).
    package var machine = 0
    /// Linked -Bsymbolic (DT_SYMBOLIC or DF_SYMBOLIC): its calls to its own exports are bound
    /// locally and never go through a slot.
    package var isSymbolic = false
    /// Exported functions (STT_FUNC, STT_GNU_IFUNC): what a `call` action may name.
    package var functions: Set<String> = []
    /// The values of exported data objects of 1 to 8 bytes (little-endian), read from the file:
    /// an advice object's `aspects_advice_version` without loading it.
    package var objectValues: [String: UInt64] = [:]
    /// ET_DYN: a shared object (or a position-independent executable).
    package var isSharedObject = false

    package init(path: String) throws(Problem) {
        guard let data = FileManager.default.contents(atPath: path) else { throw .unreadable(path) }
        let bytes = [UInt8](data)
        guard bytes.count >= 64, bytes[0] == 0x7f, bytes[1] == 0x45, bytes[2] == 0x4c, bytes[3] == 0x46 else { throw .notELF(path) }
        guard bytes[4] == 2, bytes[5] == 1 else { throw .unsupported(path) }
        func u16(_ o: Int) -> Int { o + 2 <= bytes.count ? Int(bytes[o]) | Int(bytes[o + 1]) << 8 : 0 }
        func u32(_ o: Int) -> Int { o + 4 <= bytes.count ? (0..<4).reduce(0) { $0 | Int(bytes[o + $1]) << (8 * $1) } : 0 }
        func u64(_ o: Int) -> Int { o + 8 <= bytes.count ? (0..<8).reduce(0) { $0 | Int(bytes[o + $1]) << (8 * $1) } : 0 }
        let shoff = u64(0x28), shentsize = u16(0x3a), shnum = u16(0x3c)
        isSharedObject = u16(0x10) == 3
        machine = u16(0x12)
        let phoff = u64(0x20), phentsize = u16(0x36), phnum = u16(0x38)
        if phentsize >= 56 {
            for i in 0..<phnum where phoff + (i + 1) * phentsize <= bytes.count && u32(phoff + i * phentsize) == 3 { // PT_INTERP
                hasInterpreter = true
                let at = u64(phoff + i * phentsize + 8), size = u64(phoff + i * phentsize + 32)
                if at < bytes.count, size > 1, size <= 4096, at + size <= bytes.count {
                    interpreter = String(decoding: bytes[at..<(at + size)].prefix { $0 != 0 }, as: UTF8.self)
                }
            }
        }
        var imports = Set<String>(), exports = Set<String>()
        var functions = Set<String>(), objectValues: [String: UInt64] = [:]
        var dynamic = false
        var symbolic = false
        for i in 0..<shnum {
            let sh = shoff + i * shentsize
            guard sh + 64 <= bytes.count else { break }
            let type = u32(sh + 4)
            if type == 6 { // SHT_DYNAMIC
                dynamic = true
                let offset = u64(sh + 0x18), size = u64(sh + 0x20)
                var o = offset
                while o + 16 <= offset + size && o + 16 <= bytes.count {
                    let tag = u64(o), val = u64(o + 8)
                    if tag == 16 || (tag == 30 && val & 0x2 != 0) { symbolic = true } // DT_SYMBOLIC, DT_FLAGS & DF_SYMBOLIC
                    if tag == 0 { break }
                    o += 16
                }
            }
            guard type == 11 else { continue } // SHT_DYNSYM
            let offset = u64(sh + 0x18), size = u64(sh + 0x20), link = u32(sh + 0x28), entsize = max(u64(sh + 0x38), 24)
            let strSh = shoff + link * shentsize
            guard strSh + 64 <= bytes.count else { continue }
            let strOffset = u64(strSh + 0x18), strSize = u64(strSh + 0x20)
            var o = offset
            while o + 24 <= offset + size && o + 24 <= bytes.count {
                let nameOff = u32(o), info = Int(bytes[o + 4]), shndx = u16(o + 6)
                o += entsize
                let bind = info >> 4
                guard nameOff > 0, nameOff < strSize, bind == 1 || bind == 2 else { continue }
                var end = strOffset + nameOff
                while end < bytes.count && end < strOffset + strSize && bytes[end] != 0 { end += 1 }
                let name = String(decoding: bytes[(strOffset + nameOff)..<end], as: UTF8.self)
                if shndx == 0 { imports.insert(name) } else { exports.insert(name) }
                let symType = info & 0xf, value = u64(o - entsize + 8), size = u64(o - entsize + 16)
                if shndx != 0 && (symType == 2 || symType == 10) { functions.insert(name) } // STT_FUNC, STT_GNU_IFUNC
                if symType == 1, (1...8).contains(size), shndx > 0, shndx < shnum {           // STT_OBJECT in a section
                    let dh = shoff + shndx * shentsize
                    guard dh + 64 <= bytes.count, u32(dh + 4) != 8 else { continue }          // not SHT_NOBITS
                    let at = u64(dh + 0x18) + (value - u64(dh + 0x10))
                    guard value >= u64(dh + 0x10), at >= 0, at + size <= bytes.count else { continue }
                    objectValues[name] = (0..<size).reduce(UInt64(0)) { $0 | UInt64(bytes[at + $1]) << (8 * UInt64($1)) }
                }
            }
        }
        self.path = path
        self.imports = imports
        self.exports = exports
        self.functions = functions
        self.objectValues = objectValues
        isDynamic = dynamic
        isSymbolic = symbolic
    }
}
