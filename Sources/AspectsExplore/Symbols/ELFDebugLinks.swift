/// What an object says of its separate debug file: its build-id (the `NT_GNU_BUILD_ID` note)
/// and its `.gnu_debuglink` (a file name and the CRC-32 of that file).
extension ELFFile {
    /// The build-id's bytes, from the first GNU build-id note of a SHT_NOTE section.
    var buildID: [UInt8]? {
        for section in sections where section.type == Self.shtNote {
            guard let notes = try? contents(of: section) else { continue }
            if let id = notes.withUnsafeBytes({ Self.buildID(inNotes: $0) }) { return id }
        }
        return nil
    }

    static func buildID(inNotes raw: UnsafeRawBufferPointer) -> [UInt8]? {
        var c = ByteCursor(raw)
        while let nameSize = c.u32(), let descSize = c.u32(), let type = c.u32() {
            let nameStart = c.offset
            guard c.skip((Int(nameSize) + 3) & ~3) else { return nil }
            let descStart = c.offset
            guard c.skip((Int(descSize) + 3) & ~3) || descStart + Int(descSize) <= raw.count else { return nil }
            // NT_GNU_BUILD_ID, owner "GNU\0"
            if type == 3, nameSize == 4, Array(raw[nameStart..<nameStart + 4]) == [0x47, 0x4e, 0x55, 0], descSize > 0 {
                return Array(raw[descStart..<descStart + Int(descSize)])
            }
        }
        return nil
    }

    /// `.gnu_debuglink`: the debug file's name (no directory) and the CRC-32 of its contents.
    var debugLink: (name: String, crc: UInt32)? {
        guard let section = section(named: ".gnu_debuglink"), let bytes = try? contents(of: section) else { return nil }
        return bytes.withUnsafeBytes { raw in
            var c = ByteCursor(raw)
            guard let name = c.cString(), !name.isEmpty, !name.contains(0x2f) else { return nil }  // a name, not a path
            c.offset = (c.offset + 3) & ~3
            guard let crc = c.u32() else { return nil }
            return (String(decoding: name, as: UTF8.self), crc)
        }
    }
}
