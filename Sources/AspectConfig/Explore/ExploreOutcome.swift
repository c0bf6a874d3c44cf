/// How a program took one fault, compared with its baseline run.
public enum ExploreOutcome: String, Sendable, CaseIterable, Comparable {
    /// The same exit status and standard output as the baseline: the program coped silently.
    case absorbed
    /// Another exit status or output, no signal: the program reported the error.
    case handled
    /// Ended by a signal.
    case crash
    /// Still running at the timeout: killed with its whole process group.
    case hang
    /// The `--check` command (the user's oracle) failed after the run.
    case checkFailed = "check-failed"
    /// The fault never fired: the run took another way before the call.
    case notReached = "not-reached"

    /// Outcomes a campaign reports as findings.
    public var isFinding: Bool { self == .crash || self == .hang || self == .checkFailed }

    /// Findings first, most severe first.
    var rank: Int {
        switch self {
        case .crash: return 0
        case .hang: return 1
        case .checkFailed: return 2
        case .handled: return 3
        case .absorbed: return 4
        case .notReached: return 5
        }
    }

    public static func < (a: ExploreOutcome, b: ExploreOutcome) -> Bool { a.rank < b.rank }
}

/// What one run of the program did.
public struct RunRecord: Sendable, Equatable {
    /// The exit status, or nil when a signal ended it.
    public var exitStatus: Int32?
    /// The signal that ended it.
    public var signal: Int32?
    public var timedOut: Bool
    public var stdout: String
    public var stderr: String
    public var seconds: Double

    public init(exitStatus: Int32?, signal: Int32?, timedOut: Bool, stdout: String, stderr: String, seconds: Double) {
        self.exitStatus = exitStatus
        self.signal = signal
        self.timedOut = timedOut
        self.stdout = stdout
        self.stderr = stderr
        self.seconds = seconds
    }

    /// The run's outcome against `baseline`, given whether the fault fired and how the
    /// `--check` command (if any) ended. A fault that never fired explains nothing else the
    /// run did, so it is `not-reached` whatever happened.
    public func outcome(against baseline: RunRecord, fired: Bool, checkPassed: Bool?) -> ExploreOutcome {
        if !fired { return .notReached }
        if timedOut { return .hang }
        if signal != nil { return .crash }
        if checkPassed == false { return .checkFailed }
        if exitStatus == baseline.exitStatus && stdout == baseline.stdout { return .absorbed }
        return .handled
    }
}
