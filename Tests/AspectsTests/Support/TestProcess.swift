import AspectsCore
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The one runner of programs that run to their end: the product's Subprocess (posix_spawn,
/// one poll loop, waitpid), under a time limit. A run past its limit is killed with every
/// process it started (they carry its token in their environment), so a hung program fails its
/// test instead of hanging the suite. `Proc.run` and `BoundedRun.run` are its short forms.
enum TestProcess {
    /// The limit of a run that names none: long enough for the slowest campaign under qemu on a
    /// loaded machine, short enough that a hang ends the run the same hour.
    static let defaultTimeout: Double = 600

    /// The variable that marks every process of one run (inherited by its descendants).
    static let tokenVariable = "TEST_PROCESS_RUN"

    struct Run {
        /// The exit status, or 128+N when signal N ended it.
        var status: Int32
        var stdout: Data
        var stderr: Data
        var timedOut: Bool
        var seconds: Double
        /// The process started (0 if it ended before it was seen).
        var pid: pid_t
    }

    /// A run killed at its limit, as the error its test fails with.
    struct TimedOut: Error, CustomStringConvertible {
        var command: [String]
        var limit: Double
        var run: Run
        var description: String {
            TestProcess.timedOutMessage(command, limit) + "\n"
                + "stdout:\n\(String(decoding: run.stdout, as: UTF8.self))\nstderr:\n\(String(decoding: run.stderr, as: UTF8.self))"
        }
    }

    /// Runs `path` with `args`. `environment` entries are added to (nil: removed from) the
    /// runner's environment; LD_PRELOAD and ASPECTS_* are never inherited. `stdin` is its
    /// input (else /dev/null); `directory` its working directory. `killStrays`: once the program
    /// itself has exited, what it left running is killed too (so it cannot hold the pipes open).
    static func run(_ path: String, _ args: [String] = [], environment: [String: String?] = [:], stdin: Data? = nil,
                    directory: String? = nil, timeout: Double = defaultTimeout, killStrays: Bool = false) throws -> Run {
        noteStart([path] + args)
        let token = UUID().uuidString
        var env = Self.environment(environment, token: token)
        var (executable, arguments) = (path, args)
        if let directory {
            // Subprocess starts in our directory: env(1) changes it and then execs the program in
            // the same process. The preload is set after the change, so env itself runs without it.
            let preload = env.removeValue(forKey: "LD_PRELOAD").map { ["LD_PRELOAD=" + $0] } ?? []
            (executable, arguments) = ("/usr/bin/env", ["-C", directory, "--"] + preload + [path] + args)
        }
        let watchdog = Watchdog(token: token, thread: RunnerThread.id(), limit: timeout, killStrays: killStrays)
        let started = Date()
        let result: Subprocess.Result
        do {
            result = try Subprocess.run(executable, arguments, environment: env, input: stdin)
        } catch {
            watchdog.finish()
            throw error
        }
        let (timedOut, pid) = watchdog.finish()
        return Run(status: result.status, stdout: result.stdout, stderr: result.stderr, timedOut: timedOut,
                   seconds: Date().timeIntervalSince(started), pid: pid)
    }

    /// What a test fails with when a program of its ran past its limit.
    static func timedOutMessage(_ command: [String], _ limit: Double) -> String {
        "timed out: \(command.joined(separator: " ")) ran past its limit of \(limit) s and was killed with its descendants"
    }

    /// The environment a test's program starts in: the runner's without LD_PRELOAD and
    /// ASPECTS_* (a test sets those itself), with `environment` added (nil: removed), and the
    /// token that marks it and its descendants for the watchdog.
    static func environment(_ environment: [String: String?], token: String) -> [String: String] {
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("ASPECTS_") && $0.key != "LD_PRELOAD" }
        for (k, v) in environment { env[k] = v }
        env[tokenVariable] = token
        return env
    }

    /// A program a test starts and talks to while it runs, under the same limit as a run: at
    /// the limit it is killed with its descendants, and its test has an issue saying so when it
    /// waits for it (or lets it go). Foundation's Process underneath: the callers want its pipes
    /// and file handles; `run` keeps Subprocess for its speed.
    static func start(
        _ path: String, _ args: [String] = [], environment: [String: String?] = [:], stdin: Any? = nil,
        stdout: Any? = nil, stderr: Any? = nil, directory: String? = nil,
        timeout: Double = defaultTimeout
    ) throws -> Live {
        let token = UUID().uuidString
        let p = Process()
        p.executableURL = URL(fileURLWithPath: path)
        p.arguments = args
        p.environment = Self.environment(environment, token: token)
        if let directory { p.currentDirectoryURL = URL(fileURLWithPath: directory) }
        if let stdin { p.standardInput = stdin }
        if let stdout { p.standardOutput = stdout }
        if let stderr { p.standardError = stderr }
        try p.run()
        return Live(p, watch: watch(pid: p.processIdentifier, command: [path] + args, token: token, timeout: timeout))
    }

    /// Watches a program a test spawned itself (for the descriptors or signal mask it needs),
    /// as `start` does: its environment must carry `token` (`tokenVariable`), by which the
    /// watchdog finds it and its descendants at the limit. (Both note the start for `.fast`.)
    static func watch(pid: pid_t, command: [String], token: String, timeout: Double = defaultTimeout) -> Watch {
        noteStart(command)
        return Watch(
            command: command, limit: timeout,
            watchdog: Watchdog(token: token, thread: 0, pid: pid, limit: timeout, killStrays: false))
    }

    /// The time limit of one started program.
    final class Watch {
        let command: [String], limit: Double
        private let watchdog: Watchdog
        private var finished = false, timedOut = false

        fileprivate init(command: [String], limit: Double, watchdog: Watchdog) {
            (self.command, self.limit, self.watchdog) = (command, limit, watchdog)
        }

        /// Stops watching (call it once the program is reaped); whether the limit killed it,
        /// which is then an issue of the current test. Once: later calls only repeat the answer.
        @discardableResult
        func finish() -> Bool {
            guard !finished else { return timedOut }
            finished = true
            timedOut = watchdog.finish().timedOut
            if timedOut { Issue.record(Comment(rawValue: TestProcess.timedOutMessage(command, limit))) }
            return timedOut
        }

        deinit { finish() }
    }

    /// A started program (`start`): its Process, and its limit.
    final class Live {
        let process: Process
        let watch: Watch
        fileprivate init(_ process: Process, watch: Watch) { (self.process, self.watch) = (process, watch) }

        var pid: pid_t { process.processIdentifier }
        var isRunning: Bool { process.isRunning }

        /// Waits for its end: its exit status, or 128+N when signal N ended it (as `Run`).
        @discardableResult
        func wait() -> Int32 {
            process.waitUntilExit()
            watch.finish()
            return status
        }

        /// Its status once it has ended (as `wait()` returns it).
        var status: Int32 {
            process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
        }

        /// Sends `signal` while it runs (SIGTERM by default; a test runner's thread may block
        /// it in the child, which then needs SIGKILL).
        func signal(_ signal: Int32 = SIGTERM) { if process.isRunning { kill(process.processIdentifier, signal) } }
    }

    /// A test tagged `.fast` promises to start no program: starting one is an issue of that test.
    /// Every way the tests start a program calls this first.
    static func noteStart(_ command: [String]) {
        guard let test = Test.current, test.tags.contains(.fast) else { return }
        Issue.record("tagged .fast but started \(command.joined(separator: " "))")
    }
}

/// The kernel's id of the calling thread: the run's process is its only child while it waits in
/// Subprocess.run (/proc/self/task/<id>/children). Glibc declares gettid only under
/// _GNU_SOURCE, which Swift's import does not define: found with dlsym.
private enum RunnerThread {
    private typealias GetTID = @convention(c) () -> pid_t
    private static let gettid: GetTID? = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "gettid").map { unsafeBitCast($0, to: GetTID.self) }
    static func id() -> pid_t { gettid?() ?? 0 }
}

/// Watches one run from a thread of its own: learns its pid (or is told it), kills every process carrying its
/// token when the limit passes (and, with `killStrays`, once the program itself has exited).
private final class Watchdog: @unchecked Sendable {
    private let token: String, thread: pid_t, limit: Double, killStrays: Bool
    private let lock = NSLock()
    private var done = false, timedOut = false, pid: pid_t = 0
    private let finished = DispatchSemaphore(value: 0)

    init(token: String, thread: pid_t, pid: pid_t = 0, limit: Double, killStrays: Bool) {
        (self.token, self.thread, self.pid, self.limit, self.killStrays) = (token, thread, pid, limit, killStrays)
        Thread.detachNewThread { [self] in watch() }
    }

    /// Stops watching; whether the limit killed the run, and its pid.
    @discardableResult
    func finish() -> (timedOut: Bool, pid: pid_t) {
        lock.lock()
        done = true
        lock.unlock()
        finished.wait()
        lock.lock()
        defer { lock.unlock() }
        return (timedOut, pid)
    }

    private var isDone: Bool { lock.lock(); defer { lock.unlock() }; return done }

    private func watch() {
        defer { finished.signal() }
        let deadline = Date().addingTimeInterval(limit)
        var step: useconds_t = 1000, straysKilled = false
        while !isDone {
            if pid == 0, thread != 0, let child = child() {
                lock.lock()
                pid = child
                lock.unlock()
            }
            if Date() >= deadline {
                lock.lock()
                timedOut = true
                lock.unlock()
                killTokenHolders()
                return
            }
            if killStrays && !straysKilled && pid != 0 && isZombie(pid) {
                killTokenHolders()
                straysKilled = true
            }
            usleep(step)
            step = min(step * 2, 50_000)
        }
    }

    private func child() -> pid_t? {
        guard let text = try? String(contentsOfFile: "/proc/self/task/\(thread)/children", encoding: .utf8) else { return nil }
        return text.split(separator: " ").first.flatMap { pid_t($0) }
    }

    private func isZombie(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return true }
        return stat[stat.index(after: close)...].dropFirst().first == "Z"
    }

    /// SIGKILL to every process whose environment has the run's token, again until none is left
    /// (a process may fork between the scan and the kill).
    private func killTokenHolders() {
        let mark = Data("\(TestProcess.tokenVariable)=\(token)\0".utf8)
        for _ in 0..<100 {
            let pids = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { pid_t($0) }
            let holders = pids.filter { pid in
                guard pid != getpid(), let environ = FileManager.default.contents(atPath: "/proc/\(pid)/environ") else { return false }
                return environ.range(of: mark) != nil
            }
            if holders.isEmpty { return }
            for pid in holders { kill(pid, SIGKILL) }
            usleep(1000)
        }
    }
}
