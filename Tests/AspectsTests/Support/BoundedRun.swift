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
/// resource limits) without ever hanging the test suite: each run is a process group of its
/// own, killed whole (SIGKILL) when its time is up, and killed whole again once its leader
/// exited, so a stray descendant cannot hold the output pipes open.
enum BoundedRun {
    /// Runs `path` with `args`. `environment` entries are added to (nil: removed from) the
    /// runner's environment; LD_PRELOAD and ASPECTS_* are never inherited, as in `Proc.run`.
    /// Exit status as `Proc.run` reports it: the code, or 128 + N for signal N.
    static func run(_ path: String, _ args: [String] = [], environment: [String: String?] = [:],
                    timeout: Double) throws -> BoundedOutcome {
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("ASPECTS_") && $0.key != "LD_PRELOAD" }
        for (k, v) in environment { env[k] = v }
        let out = try Pipe2(), err = try Pipe2()
        var actions = posix_spawn_file_actions_t()
        var attr = posix_spawnattr_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawnattr_init(&attr)
        defer { posix_spawn_file_actions_destroy(&actions); posix_spawnattr_destroy(&attr) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, out.write, 1)
        posix_spawn_file_actions_adddup2(&actions, err.write, 2)
        posix_spawnattr_setpgroup(&attr, 0)
        // Signals the runner blocks or ignores must not leak into the program (signal tests).
        var none = sigset_t(), all = sigset_t()
        sigemptyset(&none)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attr, &none)
        posix_spawnattr_setsigdefault(&attr, &all)
        posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = ([path] + args).map { strdup($0) } + [nil]
        let envp = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let started = Date()
        let rc = posix_spawn(&pid, path, &actions, &attr, argv, envp)
        close(out.write)
        close(err.write)
        guard rc == 0 else {
            close(out.read)
            close(err.read)
            throw BoundedRunError(message: "posix_spawn \(path): \(String(cString: strerror(rc)))")
        }
        let stdoutText = Drain(out.read), stderrText = Drain(err.read)

        // The leader is polled without being reaped (WNOWAIT): while it is a zombie its pid,
        // which is the group's id, cannot be reused, so killing the group stays safe.
        var timedOut = false
        while !leaderExited(pid) {
            if Date().timeIntervalSince(started) > timeout {
                timedOut = true
                break
            }
            usleep(2000)
        }
        kill(-pid, SIGKILL) // on time-out the whole run; otherwise descendants it left behind
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let seconds = Date().timeIntervalSince(started)
        let signal = status & 0x7f
        let code = signal == 0 ? (status >> 8) & 0xff : 128 + signal
        return BoundedOutcome(status: code, stdout: stdoutText.wait(), stderr: stderrText.wait(), timedOut: timedOut,
                              seconds: seconds, pid: pid)
    }

    private static func leaderExited(_ pid: pid_t) -> Bool {
        var info = siginfo_t()
        let r = waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT)
        return r != 0 || info.si_signo == SIGCHLD // an error: nothing left to wait for
    }

    /// Environment that preloads libaspects.so with a table (as `Proc.preload`).
    static func preload(_ table: String) -> [String: String?] { Proc.preload(table: table) }
}

struct BoundedRunError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

/// A pipe whose write end the child gets. Both ends are close-on-exec from the start (pipe2):
/// tests run in parallel, and a process another test starts meanwhile must not inherit the
/// write end, or the reader would wait for that process's end too. Glibc's headers declare
/// pipe2 only under _GNU_SOURCE, which Swift's import does not define: found with dlsym.
private struct Pipe2 {
    let read: Int32, write: Int32
    private typealias Pipe2Function = @convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32
    private static let pipe2: Pipe2Function? = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "pipe2")
        .map { unsafeBitCast($0, to: Pipe2Function.self) }

    init() throws {
        var fds: [Int32] = [0, 0]
        guard let pipe2 = Self.pipe2, pipe2(&fds, O_CLOEXEC) == 0 else { throw BoundedRunError(message: "pipe2: \(errno)") }
        read = fds[0]
        write = fds[1]
    }
}

/// Reads a descriptor to its end on a thread of its own (so a chatty program never blocks on
/// a full pipe), then closes it.
private final class Drain: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private var data = Data()

    init(_ fd: Int32) {
        Thread.detachNewThread { [self] in
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
                if n > 0 { data.append(contentsOf: buffer[0..<n]); continue }
                if n < 0 && errno == EINTR { continue }
                break
            }
            close(fd)
            done.signal()
        }
    }

    func wait() -> String {
        done.wait()
        return String(decoding: data, as: UTF8.self)
    }
}
