import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The result of a run with a time limit: `timedOut` when the limit killed it.
struct BoundedOutcome: CustomStringConvertible {
    var status: Int32
    var stdout: String
    var stderr: String
    var timedOut: Bool
    var seconds: Double
    /// The run's pid (an `aspectctl run` killed at its time-out leaves its table, run-PID-…)
    var pid: pid_t = 0
    var description: String {
        "status \(status)\(timedOut ? " (killed: timed out)" : "") after \(String(format: "%.2f", seconds)) s\nstdout:\n\(stdout)\nstderr:\n\(stderr)"
    }
}

/// Runs programs that may hang or leave children behind (fork storms, signal storms, tiny
/// resource limits) without ever hanging the test suite: the run and what it started are
/// killed (SIGKILL) when its time is up, and killed again once the program itself exited, so a
/// stray descendant cannot hold the output pipes open. A time-out is an outcome here (tests
/// check `timedOut`), not an error as in `Proc.run`.
enum BoundedRun {
    /// Runs `path` with `args`. `environment` entries are added to (nil: removed from) the
    /// runner's environment; LD_PRELOAD and ASPECTS_* are never inherited, as in `Proc.run`.
    /// Exit status as `Proc.run` reports it: the code, or 128 + N for signal N.
    static func run(_ path: String, _ args: [String] = [], environment: [String: String?] = [:],
                    timeout: Double) throws -> BoundedOutcome {
        let r = try TestProcess.run(path, args, environment: environment, timeout: timeout, killStrays: true)
        return BoundedOutcome(status: r.status, stdout: String(decoding: r.stdout, as: UTF8.self),
                              stderr: String(decoding: r.stderr, as: UTF8.self), timedOut: r.timedOut, seconds: r.seconds, pid: r.pid)
    }

    /// Environment that preloads libaspects.so with a table (as `Proc.preload`).
    static func preload(_ table: String) -> [String: String?] { Proc.preload(table: table) }
}
