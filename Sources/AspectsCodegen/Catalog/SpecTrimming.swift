extension StringProtocol {
    /// The text without leading and trailing spaces and tabs: the spec's own whitespace (it is
    /// ASCII). Foundation's trimmingCharacters(in: .whitespaces) bridges through NSString and
    /// took a third of the catalog's parse.
    var trimmingSpaces: String {
        let bytes = Array(utf8)
        func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 }
        guard let first = bytes.firstIndex(where: { !isSpace($0) }) else { return "" }
        let last = bytes.lastIndex(where: { !isSpace($0) })!
        return String(decoding: bytes[first...last], as: UTF8.self)
    }
}
