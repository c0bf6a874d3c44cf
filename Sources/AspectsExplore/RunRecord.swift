import Foundation
import AspectsCore
import AspectsRules

/// A process of a run's tree that a crash signal ended, as the preload's crash recorder saw it
/// (ASPECTS_RECORD_CRASH): the child of a shell script dies by SIGSEGV, the script exits 139.
/// Or one whose own handler caught the crash signal and did not return (m4 prints "internal
/// error detected" and exits 1): it crashed all the same, whatever status it exits with.
package struct ProcessCrash: Sendable, Hashable {
    package var pid: Int32
    /// The executable's path (its start cut off when long).
    package var program: String
    package var signal: Int32
    /// The crashing thread's stack, as the recorder left it (CrashStack); empty when unknown.
    package var stack: [StackFrame]
    /// A handler of the program's caught the signal and exited or jumped out (the attachment's
    /// `crashCaught`); the stack is the one the recorder took before the handler ran.
    package var caughtByHandler: Bool

    package init(pid: Int32, program: String, signal: Int32, stack: [StackFrame] = [], caughtByHandler: Bool = false) {
        self.pid = pid
        self.program = program
        self.signal = signal
        self.stack = stack
        self.caughtByHandler = caughtByHandler
    }

    /// What the reports say of a caught crash, beside its signal or signature.
    package static let caughtLabel = "caught by the program's handler"

    /// `signal 11 (SIGSEGV) in ledger (pid 4242)`, `…, caught by the program's handler`
    package var description: String {
        let name = ErrorNames.signalName(signal).map { " (\($0))" } ?? ""
        return "signal \(signal)\(name) in \(program.split(separator: "/").last.map(String.init) ?? program) (pid \(pid))"
            + (caughtByHandler ? ", " + Self.caughtLabel : "")
    }
}

/// What one run of the program did.
package struct RunRecord: Sendable, Equatable {
    /// The exit status, or nil when a signal ended it.
    package var exitStatus: Int32?
    /// The signal that ended it.
    package var signal: Int32?
    package var timedOut: Bool
    /// The end of the run's stdout and stderr (at most `ProgramRun.outputTailBytes` each), as
    /// text: what reports show. Outcomes compare the streams whole, by size and digest.
    package var stdout: String
    package var stderr: String
    package var seconds: Double
    /// Each stream's size in bytes, the whole of it.
    package var stdoutBytes: UInt64
    package var stderrBytes: UInt64
    /// Each stream's 128-bit FNV-1a (`OutputDigest`, 32 hex digits), over the whole of it;
    /// "" when it was written faster than explore could read it (`OutputCapture.backlog`):
    /// such a stream is never the same as another.
    package var stdoutDigest: String
    package var stderrDigest: String
    /// The most of each stream its file kept (`ProgramRun.outputFileCap`); 0: no cap.
    package var outputCap: UInt64 = 0
    /// The programs (their /proc comm names, sorted) of the processes the run left running
    /// after its command ended, killed then (`ProcessTree.endRun`).
    package var survivors: [String] = []
    /// A silent difference's: the paths of its working directory that differ from the
    /// baseline's, and `(stdout)` when its stdout does (`BaselineFiles`).
    package var differingFiles: [String] = []
    /// Every process of the tree (the command itself included) that a crash signal ended.
    package var crashes: [ProcessCrash] = []
    /// The files holding the run's stdout and stderr (the check reads them; at most
    /// `outputCap` bytes each), "" when none.
    package var stdoutPath = ""
    package var stderrPath = ""
    /// Read back from a report (`ReportCoding`), which keeps of a long stderr its start and
    /// tail, not its middle: the length of the text it was cut from.
    package var stderrLength: Int?

    /// The exit status as a shell gives it: 128+N for signal N.
    package var shellStatus: Int32 { exitStatus ?? 128 + (signal ?? 0) }

    /// The signal that ended the command when that is a crash: any but SIGPIPE, which is how a
    /// writer ends when its reader has gone (bison writing to an m4 that died, a pipeline's
    /// head after its tail exited) — the normal end of a write nobody reads, an outcome by
    /// its status like an exit, never a crash.
    package var crashSignal: Int32? { signal == SIGPIPE ? nil : signal }

    package init(exitStatus: Int32?, signal: Int32?, timedOut: Bool, stdout: String, stderr: String, seconds: Double) {
        self.exitStatus = exitStatus
        self.signal = signal
        self.timedOut = timedOut
        self.stdout = stdout
        self.stderr = stderr
        self.seconds = seconds
        stdoutBytes = UInt64(stdout.utf8.count)
        stderrBytes = UInt64(stderr.utf8.count)
        stdoutDigest = OutputDigest.of(stdout)
        stderrDigest = OutputDigest.of(stderr)
    }

    /// Whether `other` wrote the same stdout, whole (size and digest, not the tails).
    package func sameStdout(as other: RunRecord) -> Bool {
        stdoutBytes == other.stdoutBytes && !stdoutDigest.isEmpty && stdoutDigest == other.stdoutDigest
    }
    package func sameStderr(as other: RunRecord) -> Bool {
        stderrBytes == other.stderrBytes && !stderrDigest.isEmpty && stderrDigest == other.stderrDigest
    }

    /// The streams whose file holds only their first `outputCap` bytes: `["stdout"]` ...
    package var truncatedStreams: [String] {
        guard outputCap > 0 else { return [] }
        return [("stdout", stdoutBytes), ("stderr", stderrBytes)].filter { $0.1 > outputCap }.map(\.0)
    }

    /// `stdout truncated at 16777216 bytes (of 52428800)`, one per truncated stream.
    package var truncationNotes: [String] {
        truncatedStreams.map { s in "\(s) truncated at \(outputCap) bytes (of \(s == "stdout" ? stdoutBytes : stderrBytes))" }
    }

    /// The survivors beyond those the baseline left (per program): a fault that leaves a
    /// process running that a normal run does not.
    package func newSurvivors(against baseline: RunRecord) -> [String] {
        var expected: [String: Int] = [:]
        for p in baseline.survivors { expected[p, default: 0] += 1 }
        return survivors.filter { p in
            if let n = expected[p], n > 0 { expected[p] = n - 1; return false }
            return true
        }
    }

    /// The run's outcome against `baseline`, given whether the fault fired and how the
    /// `--check` command (if any) ended. A fault that never fired explains nothing else the
    /// run did, so it is `not-reached` whatever happened. `failFast`: whether the run stopped
    /// on purpose for want of memory (`FailFast.applies`; false with `--fail-fast-is-bug`) —
    /// an abort so is no crash, an exit so is no failed check's finding unless the check fails.
    package func outcome(against baseline: RunRecord, fired: Bool, checkPassed: Bool?, failFast: Bool = false) -> ExploreOutcome {
        if !fired { return .notReached }
        if timedOut { return .hang }
        let crashed = crashSignal != nil || !newCrashes(against: baseline).isEmpty
        if crashed { return failFast ? .failFast : .crash }
        if checkPassed == false { return .checkFailed }
        if failFast { return .failFast }
        if exitStatus == baseline.exitStatus && sameStdout(as: baseline) && sameStderr(as: baseline) { return .absorbed }
        return .handled
    }

    /// The crashes of this run's tree beyond those of the baseline (per program and signal): a
    /// program whose tree crashes a process on every run, fault or not, has not crashed from
    /// the fault.
    package func newCrashes(against baseline: RunRecord) -> [ProcessCrash] {
        var expected: [String: Int] = [:]
        for c in baseline.crashes { expected["\(c.signal) \(c.program)", default: 0] += 1 }
        return crashes.filter { c in
            let key = "\(c.signal) \(c.program)"
            if let n = expected[key], n > 0 { expected[key] = n - 1; return false }
            return true
        }
    }
}
