import CZlib

/// A section's bytes as a reader sees them: a `SHF_COMPRESSED` section (gcc -gz, and Debian's
/// debug files) inflated with zlib.
extension ELFFile {
    enum ContentsError: Error, Equatable {
        /// SHT_NOBITS: the section takes no room in this file (a debug file's copy of .text)
        case noBits
        /// offsets or sizes outside the file, a broken compression header or stream
        case malformed
        /// a compression this reader does not inflate (ELFCOMPRESS_ZSTD …)
        case unsupportedCompression(UInt32)
    }

    static let elfcompressZlib: UInt32 = 1
    /// zlib cannot expand more than 1032:1; a header claiming more lies.
    static let maxInflateRatio: UInt64 = 1032
    static let maxInflatedSize: UInt64 = 1 << 30

    func contents(of section: Section) throws(ContentsError) -> [UInt8] {
        guard section.type != Self.shtNobits else { throw .noBits }
        guard let stored = read(at: section.offset, count: section.size) else { throw .malformed }
        guard section.flags & Self.shfCompressed != 0 else { return stored }
        // Elf64_Chdr: ch_type, ch_reserved, ch_size, ch_addralign, then the stream
        guard stored.count >= 24 else { throw .malformed }
        let (type, inflatedSize) = stored.withUnsafeBytes { raw in
            var c = ByteCursor(raw)
            let type = c.u32()
            _ = c.skip(4)
            return (type ?? 0, c.u64() ?? 0)
        }
        guard type == Self.elfcompressZlib else { throw .unsupportedCompression(type) }
        let streamSize = UInt64(stored.count - 24)
        guard inflatedSize <= Self.maxInflatedSize, inflatedSize <= streamSize &* Self.maxInflateRatio &+ 64 else { throw .malformed }
        if inflatedSize == 0 { return [] }
        var produced = uLongf(inflatedSize)
        var status: Int32 = Z_DATA_ERROR
        let out = [UInt8](unsafeUninitializedCapacity: Int(inflatedSize)) { buffer, initialized in
            stored.withUnsafeBufferPointer { source in
                status = uncompress(buffer.baseAddress, &produced, source.baseAddress! + 24, uLong(streamSize))
            }
            initialized = status == Z_OK ? Int(produced) : 0
        }
        guard status == Z_OK, UInt64(out.count) == inflatedSize else { throw .malformed }
        return out
    }
}
