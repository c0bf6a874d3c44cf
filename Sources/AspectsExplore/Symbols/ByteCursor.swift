/// A bounds-checked reader over bytes that may come from a hostile file: every read past the
/// end returns nil (and leaves the cursor at the end), never traps, so a truncated or lying
/// object is "cannot symbolize".
struct ByteCursor {
    let bytes: UnsafeRawBufferPointer
    var offset: Int

    init(_ bytes: UnsafeRawBufferPointer, at offset: Int = 0) {
        self.bytes = bytes
        self.offset = offset
    }

    var remaining: Int { max(0, bytes.count - offset) }
    var atEnd: Bool { offset >= bytes.count }

    /// Moves `count` bytes on; false (and at the end) when fewer are left.
    mutating func skip(_ count: Int) -> Bool {
        guard count >= 0, count <= remaining else {
            offset = bytes.count
            return false
        }
        offset += count
        return true
    }

    /// A little-endian unsigned integer of `size` bytes (1 to 8).
    mutating func uint(_ size: Int) -> UInt64? {
        guard size >= 1, size <= 8, size <= remaining else {
            offset = bytes.count
            return nil
        }
        var v: UInt64 = 0
        for i in 0..<size { v |= UInt64(bytes[offset + i]) << (8 * UInt64(i)) }
        offset += size
        return v
    }

    mutating func u8() -> UInt8? {
        guard offset < bytes.count else { return nil }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func u16() -> UInt16? { uint(2).map { UInt16($0) } }
    mutating func u32() -> UInt32? { uint(4).map { UInt32($0) } }
    mutating func u64() -> UInt64? { uint(8) }

    /// An unsigned LEB128; nil past the end or beyond 64 bits of value.
    mutating func uleb() -> UInt64? {
        var v: UInt64 = 0
        var shift: UInt64 = 0
        while offset < bytes.count {
            let b = bytes[offset]
            offset += 1
            if shift < 64 {
                v |= UInt64(b & 0x7f) << shift
            } else if b & 0x7f != 0 {
                return nil
            }
            if b & 0x80 == 0 { return v }
            shift += 7
        }
        return nil
    }

    /// A signed LEB128; nil past the end.
    mutating func sleb() -> Int64? {
        var v: Int64 = 0
        var shift: Int64 = 0
        while offset < bytes.count {
            let b = bytes[offset]
            offset += 1
            if shift < 64 { v |= Int64(b & 0x7f) << shift }
            shift += 7
            if b & 0x80 == 0 {
                if shift < 64, b & 0x40 != 0 { v |= -(Int64(1) << shift) }
                return v
            }
        }
        return nil
    }

    /// A NUL-terminated string's bytes (without the NUL); nil when no NUL comes before the end.
    mutating func cString() -> UnsafeRawBufferPointer? {
        guard let s = Self.cString(in: bytes, at: offset) else {
            offset = bytes.count
            return nil
        }
        offset += s.count + 1
        return s
    }

    /// The NUL-terminated string at `offset` of `bytes`; nil when out of bounds or unterminated.
    static func cString(in bytes: UnsafeRawBufferPointer, at offset: Int) -> UnsafeRawBufferPointer? {
        guard offset >= 0, offset < bytes.count else { return nil }
        let rest = UnsafeRawBufferPointer(rebasing: bytes[offset...])
        guard let end = rest.firstIndex(of: 0) else { return nil }
        return UnsafeRawBufferPointer(rebasing: rest[..<end])
    }
}
