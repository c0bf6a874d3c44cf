import ArgumentParser
import AspectsCore
import AspectsExplore
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What `run --expect-fired` asks for.
enum ExpectFired: Equatable {
    case all
    case firings(UInt64)
    case rules([String])

    init?(_ text: String) {
        if text == "all" { self = .all; return }
        if let n = UInt64(text), n > 0 { self = .firings(n); return }
        let ids = text.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        guard !ids.isEmpty, ids.allSatisfy({ id in !id.isEmpty && id.count < 32 && id.allSatisfy { $0.isLetter || $0.isNumber || "-_.".contains($0) } }) else { return nil }
        self = .rules(ids)
    }
}

/// `--expect-fired` is an option whose value may be left out (`defaultAsFlag`): bare, it
/// means every rule. Its value goes after `=`; the word after a bare `--expect-fired` is the
/// command (`run --expect-fired dd if=/dev/zero`), a form older than such options in the
/// argument parser, kept. The parser takes that word as the value, as for any option:
/// validate() finds the case in the words as given and has them parsed again as meant.
enum BareExpectFired {
    static let name = "expect-fired"
    static let word = "--" + name

    /// nil when the parser read run's words as meant; else those words as meant, with the
    /// command after `--`. `given` are run's words as typed, `captured` the command's words
    /// the parser captured (the same words at the end). A value given apart, as in
    /// `--expect-fired 3 -- ./app`, reads as a value and names no program on PATH: refused,
    /// with the spelling meant.
    static func commandAfterBareOption(given: [String], captured: [String]) throws -> [String]? {
        guard given.count >= captured.count, given.suffix(captured.count).elementsEqual(captured) else { return nil }
        let options = given[..<(given.count - captured.count)]
        guard let bare = options.lastIndex(of: word), bare + 1 < options.endIndex, !options[bare + 1].hasPrefix("-") else { return nil }
        let first = options[bare + 1]
        if ExpectFired(first) != nil, (try? ProgramPath.resolve(first)) == nil {
            throw ValidationError("\(word) \(first): its value goes after =, as in \(word)=\(first); a bare \(word) means every rule, and the next word is the command (\"\(first)\" is no program on PATH)")
        }
        return Array(given[..<bare]) + [word + "=all", "--"] + Array(given[(bare + 1)...])
    }
}
