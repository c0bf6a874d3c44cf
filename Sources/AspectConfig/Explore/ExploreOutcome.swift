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

/// A process of a run's tree that a crash signal ended, as the preload's crash recorder saw it
/// (ASPECTS_RECORD_CRASH): the child of a shell script dies by SIGSEGV, the script exits 139.
public struct ProcessCrash: Sendable, Hashable {
    public var pid: Int32
    /// The executable's path (its start cut off when long).
    public var program: String
    public var signal: Int32
    /// The crashing thread's stack, as the recorder left it (CrashStack); empty when unknown.
    public var stack: [StackFrame]

    public init(pid: Int32, program: String, signal: Int32, stack: [StackFrame] = []) {
        self.pid = pid
        self.program = program
        self.signal = signal
        self.stack = stack
    }

    /// `signal 11 (SIGSEGV) in ledger (pid 4242)`
    public var description: String {
        let name = ErrorNames.signalName(signal).map { " (\($0))" } ?? ""
        return "signal \(signal)\(name) in \(program.split(separator: "/").last.map(String.init) ?? program) (pid \(pid))"
    }
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
    /// Every process of the tree (the command itself included) that a crash signal ended.
    public var crashes: [ProcessCrash] = []
    /// The files holding the run's whole stdout and stderr (the check reads them), "" when none.
    public var stdoutPath = ""
    public var stderrPath = ""
    /// Read back from a report (`ReportCoding`), which keeps the size of stdout, not stdout,
    /// and of a long stderr its start and tail, not its middle: their sizes as they were.
    public var stdoutSize: Int?
    public var stderrLength: Int?

    /// The exit status as a shell gives it: 128+N for signal N.
    public var shellStatus: Int32 { exitStatus ?? 128 + (signal ?? 0) }

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
        if signal != nil || !newCrashes(against: baseline).isEmpty { return .crash }
        if checkPassed == false { return .checkFailed }
        if exitStatus == baseline.exitStatus && stdout == baseline.stdout && stderr == baseline.stderr { return .absorbed }
        return .handled
    }

    /// The crashes of this run's tree beyond those of the baseline (per program and signal): a
    /// program whose tree crashes a process on every run, fault or not, has not crashed from
    /// the fault.
    public func newCrashes(against baseline: RunRecord) -> [ProcessCrash] {
        var expected: [String: Int] = [:]
        for c in baseline.crashes { expected["\(c.signal) \(c.program)", default: 0] += 1 }
        return crashes.filter { c in
            let key = "\(c.signal) \(c.program)"
            if let n = expected[key], n > 0 { expected[key] = n - 1; return false }
            return true
        }
    }
}
