#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// One run of a command for explore: in its own working directory and process group, its
/// output in files (no pipe can fill up and stall it), killed with its whole group at the
/// timeout.
///
/// The command is started through `env -C DIR VAR=VALUE... COMMAND` (GNU env): the working
/// directory is set in the child without changing ours (runs go in parallel), and the
/// variables that load the preload (`programEnvironment`) reach the command only, not a
/// shell or helper in between whose calls the rules would count.
public struct ProgramRun: Sendable {
    public var argv: [String]
    /// The environment of every process of the run.
    public var environment: [String: String]
    /// Set for the command itself (LD_PRELOAD, ASPECTS_TABLE ...).
    public var programEnvironment: [String: String]
    public var directory: String
    public var timeout: Double
    /// Whether the record holds the command's output (explore compares it with the
    /// baseline's). Without, stdout stays "" and stderr holds its last 4 KiB, however much the
    /// command wrote.
    public var readsOutput = true

    public init(argv: [String], environment: [String: String], programEnvironment: [String: String] = [:],
                directory: String, timeout: Double) {
        self.argv = argv
        self.environment = environment
        self.programEnvironment = programEnvironment
        self.directory = directory
        self.timeout = timeout
    }

    public static let env: String = {
        for path in ["/usr/bin/env", "/bin/env"] where access(path, X_OK) == 0 { return path }
        return "/usr/bin/env"
    }()

    /// Runs it; stdout and stderr go to `outputPrefix`.stdout / .stderr (and are read back).
    public func run(outputPrefix: String) throws(AspectsError) -> RunRecord {
        let outPath = outputPrefix + ".stdout", errPath = outputPrefix + ".stderr"
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        // opened here, as every output file (OutputFile), and handed to the command
        let outFD = try OutputFile.open(outPath, option: "--out", mode: 0o600)
        defer { System.close(outFD) }
        let errFD = try OutputFile.open(errPath, option: "--out", mode: 0o600)
        defer { System.close(errFD) }
        posix_spawn_file_actions_adddup2(&actions, outFD, 1)
        posix_spawn_file_actions_adddup2(&actions, errFD, 2)
        var attrs = posix_spawnattr_t()
        posix_spawnattr_init(&attrs)
        defer { posix_spawnattr_destroy(&attrs) }
        posix_spawnattr_setpgroup(&attrs, 0)  // its own group: a timeout kills the whole tree
        var noMask = sigset_t()
        sigemptyset(&noMask)
        posix_spawnattr_setsigmask(&attrs, &noMask)
        var defaults = sigset_t()
        sigfillset(&defaults)
        posix_spawnattr_setsigdefault(&attrs, &defaults)
        posix_spawnattr_setflags(&attrs, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        // env's options, "--", then NAME=VALUE operands, then the command.
        let full = [Self.env, "-C", directory, "--"] + programEnvironment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" } + argv
        let cArgs = full.map { strdup($0) } + [nil]
        let cEnv = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { cArgs.forEach { free($0) }; cEnv.forEach { free($0) } }
        var pid: pid_t = 0
        let started = Date()
        let rc = posix_spawn(&pid, Self.env, &actions, &attrs, cArgs, cEnv)
        guard rc == 0 else {
            throw AspectsError(.system, field: "command", "cannot start \(Self.env): \(String(cString: strerror(rc)))")
        }
        var status: Int32 = 0
        var timedOut = false
        let deadline = started.addingTimeInterval(timeout)
        while true {
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid { break }
            if r == -1 && errno != EINTR { throw AspectsError(.system, "waitpid failed: \(String(cString: strerror(errno)))") }
            if !timedOut && Date() >= deadline {
                timedOut = true
                kill(-pid, SIGKILL)
            }
            usleep(timedOut ? 1000 : 2000)
        }
        // Whatever the command left running in its group ends with it.
        kill(-pid, SIGKILL)
        let seconds = Date().timeIntervalSince(started)
        let out = readsOutput ? Self.text(of: outPath) : ""
        let err = readsOutput ? Self.text(of: errPath) : Self.tail(of: errPath, bytes: 4096)
        let low = status & 0x7f
        var record = RunRecord(exitStatus: low == 0 ? (status >> 8) & 0xff : nil, signal: low == 0 ? nil : low,
                               timedOut: timedOut, stdout: out, stderr: err, seconds: seconds)
        record.stdoutPath = outPath
        record.stderrPath = errPath
        return record
    }

    /// The last `bytes` of a file, as text ("" when it cannot be read).
    /// A file's bytes as text, any invalid UTF-8 as U+FFFD: a program's output is bytes, and
    /// reading it as strict UTF-8 dropped the whole of an output with one bad byte, which then
    /// compared equal to the baseline's.
    static func text(of path: String) -> String {
        String(decoding: FileManager.default.contents(atPath: path) ?? Data(), as: UTF8.self)
    }

    static func tail(of path: String, bytes: UInt64) -> String {
        guard let h = FileHandle(forReadingAtPath: path) else { return "" }
        defer { try? h.close() }
        guard let end = try? h.seekToEnd() else { return "" }
        try? h.seek(toOffset: end > bytes ? end - bytes : 0)
        return String(decoding: (try? h.readToEnd()) ?? Data(), as: UTF8.self)
    }
}
