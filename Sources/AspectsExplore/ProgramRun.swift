#if canImport(Glibc)
import Glibc
#endif
import Foundation
import CAspectsABI
import AspectsCore

/// One run of a command for explore: in its own working directory and process group, its
/// output in files read into bounded summaries (`run`), killed with its whole group at the
/// timeout, and whatever it leaves running killed after it (`marker`).
///
/// The command is spawned directly, its working directory set in the child
/// (`aspects_spawn_chdir`: posix_spawn_file_actions_addchdir_np, glibc 2.29) without changing ours (runs go in
/// parallel), with `environment` and `programEnvironment` (the variables that load the
/// preload) as its environment. Nothing runs in between: `env -C DIR VAR=... COMMAND` did the
/// same at the cost of one more exec and env's own start-up (its locale files): 1–2 ms a run.
package struct ProgramRun: Sendable {
    package var argv: [String]
    /// The command's environment, with `programEnvironment` on top.
    package var environment: [String: String]
    /// What the run adds for the command (LD_PRELOAD, ASPECTS_TABLE ...): kept apart so that
    /// callers say what is theirs (`marker` is one of these entries).
    package var programEnvironment: [String: String]
    package var directory: String
    package var timeout: Double
    /// Whether the record holds the command's output (explore compares it with the
    /// baseline's). Without, stdout stays "" and stderr holds its last 4 KiB, however much the
    /// command wrote.
    package var readsOutput = true
    /// An entry of `programEnvironment` (`NAME=VALUE`) that only this run's processes carry:
    /// after the run, its processes still running are found by it (`ProcessTree.endRun`),
    /// killed and named in `RunRecord.survivors`. Without, only its process group is killed.
    package var marker: String?

    package init(argv: [String], environment: [String: String], programEnvironment: [String: String] = [:],
                directory: String, timeout: Double) {
        self.argv = argv
        self.environment = environment
        self.programEnvironment = programEnvironment
        self.directory = directory
        self.timeout = timeout
    }

    /// The most of each output stream a run's file (`outputPrefix`.stdout / .stderr, what
    /// --check reads) keeps: a hang that writes for ever must not fill the disk. Past it the
    /// stream is still read, counted and digested, so that outcomes compare it whole.
    package static let outputFileCap: UInt64 = 16 << 20
    /// The end of each stream the record keeps in memory (`RunRecord.stdout`/`stderr`), for
    /// reports: 16 runs of a program printing 50 MB once grew explore to 843 MB.
    package static let outputTailBytes = 64 << 10
    /// How often a running command's output files are read (and cut back to the cap): what
    /// it writes in this time is the most that the disk holds beyond the cap.
    static let outputReadMS: Int32 = 10

    /// Runs it; the record holds each stream's size, digest and last `outputTailBytes` bytes,
    /// the files `outputPrefix`.stdout / .stderr its first `outputFileCap` bytes.
    ///
    /// The command writes into regular files, as it would when its output is redirected:
    /// programs do not behave alike on a pipe (`cat` copies with copy_file_range to a file,
    /// with write to a pipe), and the reproducer scripts redirect to files. RLIMIT_FSIZE
    /// would cap the files only by failing the writer (SIGXFSZ, EFBIG). So explore reads each
    /// file while it grows (every `outputReadMS`, and to its end after the run) — every byte
    /// counted, digested and the last ones kept — and punches out what it has read past the
    /// cap (a sparse file: the disk holds the cap and what was written since the last read),
    /// then cuts the file to the cap when the run has ended. The run's end is waited for in
    /// poll() on a pidfd, so no sleep adds to a short run's time.
    package func run(outputPrefix: String) throws(AspectsError) -> RunRecord {
        let outPath = outputPrefix + ".stdout", errPath = outputPrefix + ".stderr"
        // opened here, as every output file (OutputFile), and handed to the command
        let outFD = try OutputFile.open(outPath, option: "--out", mode: 0o600)
        defer { System.close(outFD) }
        let errFD = try OutputFile.open(errPath, option: "--out", mode: 0o600)
        defer { System.close(errFD) }
        var out = try OutputCapture(file: outFD, path: outPath, fileCap: Self.outputFileCap, tailCap: Self.outputTailBytes)
        defer { out.close() }
        var err = try OutputCapture(file: errFD, path: errPath, fileCap: Self.outputFileCap, tailCap: Self.outputTailBytes)
        defer { err.close() }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, outFD, 1)
        posix_spawn_file_actions_adddup2(&actions, errFD, 2)
        // only 0-2: what explore's other threads and libraries opened without close-on-exec
        // (a test runner's sockets) must not be held open by a run's daemons
        aspects_spawn_close_from(&actions, 3)
        var attrs = posix_spawnattr_t()
        posix_spawnattr_init(&attrs)
        defer { posix_spawnattr_destroy(&attrs) }
        posix_spawnattr_setpgroup(&attrs, 0)  // its own group: a timeout kills the whole tree
        Subprocess.cleanSignals(&attrs, flags: POSIX_SPAWN_SETPGROUP)
        aspects_spawn_chdir(&actions, directory)
        let cArgs = Subprocess.cStrings(argv)
        let cEnv = Subprocess.cStrings(environment.merging(programEnvironment) { $1 })
        defer { cArgs.forEach { free($0) }; cEnv.forEach { free($0) } }
        var pid: pid_t = 0
        let started = Date()
        // PATH is searched as explore's own environment has it.
        Self.running.add(1)
        let rc = posix_spawnp(&pid, argv[0], &actions, &attrs, cArgs, cEnv)
        guard rc == 0 else {
            Self.running.add(-1)
            throw AspectsError(.noInput, field: "command", "cannot run \(argv[0]): \(String(cString: strerror(rc)))",
                               fix: "check the command after --")
        }
        let (status, timedOut) = try Self.wait(pid, deadline: started.addingTimeInterval(timeout)) {
            out.readNew()
            err.readNew()
        }
        // Whatever the command left running ends with it (`ProcessTree.endRun`); then the
        // files, which nothing writes any more, are read to their end and cut to the cap.
        let survivors = ProcessTree.endRun(group: pid, marker: marker, othersRunning: Self.running.count > 1)
        Self.running.add(-1)
        out.finish()
        err.finish()
        let seconds = Date().timeIntervalSince(started)
        let low = status & 0x7f
        var record = RunRecord(exitStatus: low == 0 ? (status >> 8) & 0xff : nil, signal: low == 0 ? nil : low,
                               timedOut: timedOut, stdout: readsOutput ? out.tailText(Self.outputTailBytes) : "",
                               stderr: err.tailText(readsOutput ? Self.outputTailBytes : 4096), seconds: seconds)
        (record.stdoutBytes, record.stdoutDigest) = (out.total, out.digestHex)
        (record.stderrBytes, record.stderrDigest) = (err.total, err.digestHex)
        record.outputCap = Self.outputFileCap
        record.survivors = survivors
        record.stdoutPath = outPath
        record.stderrPath = errPath
        return record
    }

    /// How many runs are going on in this process (explore's -j): `ProcessTree.endRun` looks
    /// for a run's leftovers more carefully while others' processes come and go.
    static let running = Counter()

    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var value = 0
        var count: Int { lock.withLock { value } }
        func add(_ n: Int) { lock.withLock { value += n } }
    }

    /// Waits for `pid` to end, calling `meanwhile` every `outputReadMS`; kills its group at
    /// `deadline`. Its wait status and whether it timed out.
    static func wait(_ pid: pid_t, deadline: Date, meanwhile: () -> Void) throws(AspectsError) -> (Int32, Bool) {
        let exitFD = aspects_pidfd_open(pid)  // -1 on kernels before 5.3: waitpid every 2 ms
        defer { if exitFD >= 0 { System.close(exitFD) } }
        var status: Int32 = 0
        var timedOut = false
        while true {
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid { return (status, timedOut) }
            if r == -1 && errno != EINTR { throw AspectsError(.system, "waitpid failed: \(String(cString: strerror(errno)))") }
            let left = deadline.timeIntervalSinceNow
            if !timedOut && left <= 0 {
                timedOut = true
                kill(-pid, SIGKILL)
            }
            var ms = exitFD >= 0 ? outputReadMS : 2
            if !timedOut { ms = min(ms, Int32(left * 1000) + 1) }
            var fds = [pollfd(fd: exitFD, events: Int16(POLLIN), revents: 0)]
            if poll(&fds, 1, ms) == 0 || exitFD < 0 { meanwhile() }
        }
    }
}
