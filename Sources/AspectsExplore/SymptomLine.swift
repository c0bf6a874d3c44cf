import Foundation

/// The line of a run's stderr that a bug known by its symptom (`BugCause.symptom`) is named
/// by, made alike across the runs of one bug.
///
/// For a failed check, the first line the baseline did not write: what went wrong first.
/// The lines after it are the damage spreading, and they differ with where the fault struck:
/// under bison, m4's one "bad regular expression … Memory exhausted" is followed by "undefined
/// macro" lines and by bison's warnings about m4's broken output, or by nothing, so the last
/// line split m4's one bug into several. For a hang or a crash without a stack, the last line:
/// its last words, said nearest where it stopped.
package enum SymptomLine {
    /// The most characters of the line kept.
    static let width = 160

    package static func of(_ r: ExploreResult, baseline: RunRecord?) -> String {
        let line = r.outcome == .checkFailed ? firstNew(in: r.record.stderr, baseline: baseline?.stderr ?? "", cut: startsMidLine(r.record))
            : shaped(r.record.stderr).last ?? ""
        return line.count > width ? String(line.prefix(width)) : line
    }

    /// The first line of `stderr`, as shaped, that no line of the baseline's is; `cut`: the
    /// text is the end of a longer stream, and its first line a piece of one.
    package static func firstNew(in stderr: String, baseline: String, cut: Bool = false) -> String {
        let known = Set(shaped(baseline))
        return shaped(stderr).dropFirst(cut ? 1 : 0).first { !known.contains($0) } ?? ""
    }

    /// Whether a run's stderr text is the tail of a longer stream (`ProgramRun.outputTailBytes`)
    /// cut at a byte count, not at a line. (Read back from a report, it is its start and tail.)
    static func startsMidLine(_ record: RunRecord) -> Bool {
        record.stderrLength == nil && record.stderrBytes > UInt64(record.stderr.utf8.count)
    }

    /// A stream's non-empty lines, each made alike (`shape`); a quotation that spans lines
    /// (m4 quotes a regex holding a newline) is made one token before the stream is cut.
    package static func shaped(_ text: String) -> [String] {
        shape(text).split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
    }

    /// What two runs of one bug write differently, made one token each: the run's own
    /// directories, addresses and numbers (`BugCause.normalized`); quoted text — the regex m4
    /// could not compile, the file a program could not open — whose message, not its object,
    /// is what the program did (`…', ‘…’, "…", '…'); and the input position a message is
    /// prefixed with (`yacc.c:441:`, `calc.y:3.1-5:`), which says where in its input the
    /// program was when the fault struck.
    package static func shape(_ text: String) -> String {
        BugCause.normalized(text)
            .replacing(Shapes.backtickQuote, with: "<q>")
            .replacing(Shapes.typographicQuote, with: "<q>")
            .replacing(Shapes.doubleQuote, with: "<q>")
            .replacing(Shapes.singleQuote) { $0.output.before + "<q>" }
            .replacing(Shapes.inputPosition, with: "<at>:")
    }

    /// `shape`'s patterns, made once (`FailFast.messages` says why).
    enum Shapes {
        nonisolated(unsafe) static let backtickQuote = #/`[^`']*'/#
        nonisolated(unsafe) static let typographicQuote = #/‘[^’]*’/#
        nonisolated(unsafe) static let doubleQuote = #/"[^"\n]*"/#
        nonisolated(unsafe) static let singleQuote = #/(?<before>[\s(\[=]|^)'[^'\n]*'/#
        nonisolated(unsafe) static let inputPosition = #/[^\s:`'"<>]+:N(?:[.:-]N)*:/#
    }
}
