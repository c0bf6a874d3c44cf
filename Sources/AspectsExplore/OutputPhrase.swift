/// A phrase looked for in a line of a program's output, without regard to ASCII case:
/// literal text in which `*` stands for any text and `#` for one or more digits
/// (`"memory allocation of # bytes failed"`, `"assertion * failed"`).
///
/// explore looks at every run's stderr: Swift's `Regex` took ~20 µs a short line per
/// pattern, which was a tenth of aspectctl's own CPU per run; a byte scan takes well under one.
package struct OutputPhrase: Sendable, ExpressibleByStringLiteral {
    enum Piece: Equatable {
        case text([UInt8])
        case anything, digits
    }
    let pieces: [Piece]

    package init(stringLiteral phrase: String) {
        var pieces: [Piece] = []
        var text: [UInt8] = []
        for b in phrase.utf8 {
            guard b == UInt8(ascii: "*") || b == UInt8(ascii: "#") else {
                text.append(Self.lower(b))
                continue
            }
            if !text.isEmpty { pieces.append(.text(text)) }
            text = []
            pieces.append(b == UInt8(ascii: "*") ? .anything : .digits)
        }
        if !text.isEmpty { pieces.append(.text(text)) }
        self.pieces = pieces
    }

    /// Whether the phrase occurs anywhere in `line`.
    package func occurs<S: StringProtocol>(in line: S) -> Bool {
        var line = Substring(line)
        // a phrase starting with text can start only where its first byte is
        guard case .text(let t)? = pieces.first, let first = t.first else {
            return line.withUTF8 { bytes in (0...bytes.count).contains { matches(bytes, from: $0, piece: 0) } }
        }
        return line.withUTF8 { bytes in
            bytes.indices.contains { Self.lower(bytes[$0]) == first && matches(bytes, from: $0, piece: 0) }
        }
    }

    private func matches(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int, piece k: Int) -> Bool {
        guard k < pieces.count else { return true }
        switch pieces[k] {
        case .text(let t):
            guard start + t.count <= bytes.count else { return false }
            for (i, b) in t.enumerated() where Self.lower(bytes[start + i]) != b { return false }
            return matches(bytes, from: start + t.count, piece: k + 1)
        case .anything:
            return (start...bytes.count).contains { matches(bytes, from: $0, piece: k + 1) }
        case .digits:
            var end = start
            while end < bytes.count, Self.isDigit(bytes[end]) {
                end += 1
                if matches(bytes, from: end, piece: k + 1) { return true }
            }
            return false
        }
    }

    static func lower(_ b: UInt8) -> UInt8 { b >= 65 && b <= 90 ? b | 0x20 : b }
    static func isDigit(_ b: UInt8) -> Bool { b >= 48 && b <= 57 }
}
