import CAspectsABI

/// Where a call comes from: the calling object's file name (no directory) and the offset of
/// the return address in that file, written `ledger+0x1a2b` — the form events print, the
/// `site` condition takes, and `addr2line -e OBJECT 0x1a2b` reads (for the usual layouts, where
/// an object's text lies at the same offset in the file as in memory).
public struct CallSite: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var object: String
    public var offset: UInt64

    public init(object: String, offset: UInt64) {
        self.object = object
        self.offset = offset
    }

    /// Parses `object+0xHEX`; nil when the text is not of that form.
    public init?(_ text: String) {
        guard let plus = text.lastIndex(of: "+") else { return nil }
        let name = String(text[..<plus])
        let hex = text[text.index(after: plus)...]
        guard !name.isEmpty, !name.contains("/"), name.utf8.count < Int(ASPECTS_EVENT_CALLER_SIZE),
              hex.hasPrefix("0x"), hex.count > 2, hex.count <= 18,
              let value = UInt64(hex.dropFirst(2), radix: 16) else { return nil }
        object = name
        offset = value
    }

    public var description: String { "\(object)+0x\(String(offset, radix: 16))" }

    public static func < (a: CallSite, b: CallSite) -> Bool { (a.object, a.offset) < (b.object, b.offset) }
}
