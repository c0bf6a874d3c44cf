// The campaign's words live below explore: its reports write them, and AspectsTesting, which
// drives the aspectctl binary and reads its JSON, names them without depending on explore.

/// How a program took one fault, compared with its baseline run.
public enum ExploreOutcome: String, Sendable, CaseIterable, Comparable {
    /// The same exit status, standard output and standard error as the baseline: the program
    /// coped silently.
    case absorbed
    /// Another exit status or output (stdout or stderr), no signal: the program reported the error.
    case handled
    /// Ended by a signal.
    case crash
    /// Still running at the timeout: killed with its whole process group.
    case hang
    /// The `--check` command (the user's oracle) failed after the run.
    case checkFailed = "check-failed"
    /// With no `--check`: the run exited as the baseline did and said nothing new on stderr,
    /// but left other files in its directory, or wrote another stdout, than the baseline
    /// (beyond what the baseline runs differ in): an error swallowed, data lost in silence.
    case silentDifference = "silent-difference"
    /// The fault never fired: the run took another way before the call.
    case notReached = "not-reached"
    /// After a failed allocation the program said memory ran out and stopped on purpose
    /// (abort or exit from its allocation wrapper): by design, not a bug (`FailFast`).
    case failFast = "fail-fast"

    /// Outcomes a campaign reports as findings.
    public var isFinding: Bool { self == .crash || self == .hang || self == .checkFailed || self == .silentDifference }

    /// Findings first, most severe first.
    package var rank: Int {
        switch self {
        case .crash: return 0
        case .hang: return 1
        case .checkFailed: return 2
        case .silentDifference: return 3
        case .failFast: return 4
        case .handled: return 5
        case .absorbed: return 6
        case .notReached: return 7
        }
    }

    public static func < (a: ExploreOutcome, b: ExploreOutcome) -> Bool { a.rank < b.rank }
}
