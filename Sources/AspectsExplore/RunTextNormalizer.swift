/// What two runs of one bug write differently, each made one token: the run's own directory
/// (`/tmp/o/work/run-00012/t.db` → `<run>/t.db`, the whole word up to the run's name, whose
/// number is the run's), hex addresses (`0x7ffd…` → `<addr>`), then every other number
/// (→ `N`). `BugCause.normalized` is the one use; a byte scan, since it runs on the lines of
/// every finding and fail-fast stop (`OutputPhrase` says what a `Regex` cost).
enum RunTextNormalizer {
    /// The names of `ExploreCampaign`'s run directories in OUT/work, each followed by `-N`.
    static let runNames: [[UInt8]] = ["baseline-again", "baseline", "run", "again", "repro", "locate", "longer"].map { Array($0.utf8) }

    static func normalized(_ line: String) -> String {
        var bytes = Array(line.utf8)
        bytes = replacingRunDirectories(bytes)
        bytes = replacingAddresses(bytes)
        bytes = replacingNumbers(bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    static func isSpace(_ b: UInt8) -> Bool { b == 32 || (b >= 9 && b <= 13) }
    static func isDigit(_ b: UInt8) -> Bool { b >= 48 && b <= 57 }
    static func isHexDigit(_ b: UInt8) -> Bool { isDigit(b) || (b | 0x20 >= 97 && b | 0x20 <= 102) }

    /// Each word's text up to the end of its last `/work/NAME-N` becomes `<run>`.
    static func replacingRunDirectories(_ s: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var i = 0
        out.reserveCapacity(s.count)
        while i < s.count {
            guard !isSpace(s[i]) else {
                out.append(s[i])
                i += 1
                continue
            }
            var end = i
            while end < s.count, !isSpace(s[end]) { end += 1 }
            var word = i
            while let cut = lastRunDirectoryEnd(s, from: word, to: end) {
                out += Array("<run>".utf8)
                word = cut
            }
            out += s[word..<end]
            i = end
        }
        return out
    }

    /// Where the last `/work/NAME-N` (N all of its digits) of `s[from..<to]` ends, nil if none.
    static func lastRunDirectoryEnd(_ s: [UInt8], from: Int, to: Int) -> Int? {
        let work = Array("/work/".utf8)
        var k = to - work.count
        while k >= from {
            if s[k..<(k + work.count)].elementsEqual(work), let end = runNameEnd(s, at: k + work.count, to: to) { return end }
            k -= 1
        }
        return nil
    }

    /// After `NAME-` at `at`, the end of the digits that follow, nil when no name and digits do.
    static func runNameEnd(_ s: [UInt8], at: Int, to: Int) -> Int? {
        for name in runNames where at + name.count + 1 < to && s[at..<(at + name.count)].elementsEqual(name) {
            var end = at + name.count
            guard s[end] == UInt8(ascii: "-") else { continue }
            end += 1
            let first = end
            while end < to, isDigit(s[end]) { end += 1 }
            if end > first { return end }
        }
        return nil
    }

    /// `0x` and hex digits.
    static func replacingAddresses(_ s: [UInt8]) -> [UInt8] {
        replacingTokens(s, with: "<addr>") { i in
            guard s[i] == UInt8(ascii: "0"), i + 2 < s.count, s[i + 1] == UInt8(ascii: "x"), isHexDigit(s[i + 2]) else { return nil }
            var end = i + 2
            while end < s.count, isHexDigit(s[end]) { end += 1 }
            return end
        }
    }

    /// Digits.
    static func replacingNumbers(_ s: [UInt8]) -> [UInt8] {
        replacingTokens(s, with: "N") { i in
            guard isDigit(s[i]) else { return nil }
            var end = i
            while end < s.count, isDigit(s[end]) { end += 1 }
            return end
        }
    }

    /// `s` with each token `tokenEnd` finds (the end of one starting at an index, nil where
    /// none does), left to right, made `replacement`.
    static func replacingTokens(_ s: [UInt8], with replacement: String, tokenEnd: (Int) -> Int?) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(s.count)
        var i = 0
        while i < s.count {
            if let end = tokenEnd(i) {
                out += Array(replacement.utf8)
                i = end
            } else {
                out.append(s[i])
                i += 1
            }
        }
        return out
    }
}
