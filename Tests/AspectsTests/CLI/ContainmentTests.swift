import Foundation
import Testing
import AspectsCore

/// What `run` started ends with it: a termination signal sent to run reaches the whole tree
/// of processes the command started, run waits for them, removes its private table and
/// exits 128+N.
@Suite(.serialized) struct ContainmentTests {
    /// The pids of live processes whose command line holds `marker`, but `except` (run, whose
    /// own arguments hold it).
    static func processes(marked marker: String, except: pid_t = 0) -> [pid_t] {
        ProcessTree.allPIDs().filter { pid in
            guard pid != except else { return false }
            guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return false }
            let words = data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            return words.contains { $0.contains(marker) } && !Self.isZombie(pid)
        }
    }

    static func isZombie(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return true }
        return stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).hasPrefix("Z")
    }

    /// Starts `argv` in its own process group (as a shell job), with the test's environment,
    /// under TestProcess's limit (its watch: finish it once the job is reaped).
    static func spawnJob(_ words: [String]) -> (pid: pid_t, watch: TestProcess.Watch?) {
        let token = UUID().uuidString
        let argv: [UnsafeMutablePointer<CChar>?] = words.map { strdup($0) } + [nil]
        let envp = Subprocess.cStrings(ProcessInfo.processInfo.environment.merging([TestProcess.tokenVariable: token]) { $1 })
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var attrs = posix_spawnattr_t()
        posix_spawnattr_init(&attrs)
        defer { posix_spawnattr_destroy(&attrs) }
        posix_spawnattr_setpgroup(&attrs, 0)
        var noMask = sigset_t()
        sigemptyset(&noMask)
        posix_spawnattr_setsigmask(&attrs, &noMask)
        posix_spawnattr_setflags(&attrs, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK))
        var pid: pid_t = 0
        guard posix_spawn(&pid, words[0], nil, &attrs, argv, envp) == 0 else { return (-1, nil) }
        return (pid, TestProcess.watch(pid: pid, command: words, token: token))
    }

    /// run's wait status; a run still there after a minute (it ignored the signal, or waits
    /// for a tree it did not end) is killed so the test fails instead of hanging.
    static func waitStatus(of run: pid_t) -> Int32 {
        var status: Int32 = 0
        for _ in 0..<3000 {
            let r = waitpid(run, &status, WNOHANG)
            if r == run { return status }
            if r == -1 && errno != EINTR { return -1 }
            usleep(20_000)
        }
        kill(run, SIGKILL)
        waitpid(run, &status, 0)
        return status
    }

    /// Waits (20 ms at a time, `tries` times at most) until `count` processes carrying `mark`
    /// run besides `job`: how many then do.
    static func started(_ mark: String, besides job: pid_t, count: Int, tries: Int = 500) -> Int {
        for _ in 0..<tries where processes(marked: mark, except: job).count < count { usleep(20_000) }
        return processes(marked: mark, except: job).count
    }

    /// A unique sleep length: the marker by which the tree's processes are found.
    static func marker() -> String { "299.\(UInt32.random(in: 100_000...999_999))" }

    @Test(arguments: [SIGTERM, SIGINT, SIGHUP])
    func runEndsTheWholeTreeItStartedWhenSignalled(_ sig: Int32) throws {
        let mark = Self.marker()
        let rule = #"{"symbol":"close","position":"before","action":{"log":true}}"#
        let script = "sleep \(mark) & sleep \(mark) & wait"
        let (run, watch) = Self.spawnJob([Paths.aspectctl, "run", "--rule", rule, "--", "/bin/sh", "-c", script])
        defer { watch?.finish() }
        try #require(run > 0)
        defer { for p in Self.processes(marked: mark, except: run) { kill(p, SIGKILL) } }
        // the shell and both sleepers are up
        try #require(Self.started(mark, besides: run, count: 3) == 3, "the tree did not start")

        kill(run, sig)
        let status = Self.waitStatus(of: run)
        #expect(status & 0x7f == 0 && (status >> 8) & 0xff == 128 + sig, "run exits 128+\(sig): wait status \(status)")
        let left = Self.processes(marked: mark)
        #expect(left.isEmpty, "processes of the run's tree still running after run ended: \(left)")
        let tables = ((try? FileManager.default.contentsOfDirectory(atPath: "/dev/shm")) ?? []).filter { $0.hasPrefix("aspects.run-\(run)-") }
        #expect(tables.isEmpty, "run left its table: \(tables)")
    }

    /// A daemon that left the command's session and ignores SIGTERM is still found (run is its
    /// subreaper) and, once the command has ended, killed; run exits as it was told to.
    @Test func aDaemonThatIgnoresTheSignalEndsWithTheRun() throws {
        let mark = Self.marker()
        let rule = #"{"symbol":"close","position":"before","action":{"log":true}}"#
        let script = "setsid sh -c 'trap \"\" TERM; sleep \(mark); :' & wait"
        let (run, watch) = Self.spawnJob([Paths.aspectctl, "run", "--rule", rule, "--", "/bin/sh", "-c", script])
        defer { watch?.finish() }
        try #require(run > 0)
        defer { for p in Self.processes(marked: mark, except: run) { kill(p, SIGKILL) } }
        // the command's shell, the daemon's shell and its sleep (TERM ignored in both)
        try #require(Self.started(mark, besides: run, count: 3) >= 3, "the tree did not start")
        kill(run, SIGTERM)
        let status = Self.waitStatus(of: run)
        #expect(status & 0x7f == 0 && (status >> 8) & 0xff == 128 + SIGTERM, "wait status \(status)")
        let left = Self.processes(marked: mark, except: run)
        #expect(left.isEmpty, "left running: \(left)")
    }

    /// An interrupted explore ends its runs' processes and removes their tables.
    @Test(arguments: [SIGTERM, SIGINT, SIGHUP])
    func anInterruptedExploreLeavesNoProcessAndNoTable(_ sig: Int32) throws {
        let mark = Self.marker()
        let out = NSTemporaryDirectory() + "aspects-contain-\(UUID().uuidString)"
        defer { TableSegments.removeScratch(out) }
        let script = "sleep \(mark) & setsid sleep \(mark) & wait"
        let (explore, watch) = Self.spawnJob([
            Paths.aspectctl, "explore", "--function", "close", "--timeout", "600", "--out", out, "--", "/bin/sh", "-c", script,
        ])
        defer { watch?.finish() }
        try #require(explore > 0)
        defer { for p in Self.processes(marked: mark, except: explore) { kill(p, SIGKILL) } }
        // the baseline's shell and both sleepers are up
        try #require(Self.started(mark, besides: explore, count: 3, tries: 1500) >= 3, "the baseline did not start")
        kill(explore, sig)
        let status = Self.waitStatus(of: explore)
        #expect(status & 0x7f == 0 && (status >> 8) & 0xff == 128 + sig, "explore exits 128+\(sig): wait status \(status)")
        let left = Self.processes(marked: mark, except: explore)
        #expect(left.isEmpty, "left running: \(left)")
        let tables = ((try? FileManager.default.contentsOfDirectory(atPath: out + "/work")) ?? []).filter { $0.hasSuffix(".table") }
        #expect(tables.isEmpty, "tables left in out/work: \(tables)")
    }

    /// A campaign leaves no table in OUT/work: not the baseline's, not a finding's.
    @Test func aCampaignLeavesNoTableInItsWorkDirectory() throws {
        let out = NSTemporaryDirectory() + "aspects-contain-\(UUID().uuidString)"
        defer { TableSegments.removeScratch(out) }
        let r = try Proc.aspectctl(["explore", "--function", "write", "--out", out, "--", "/bin/sh", "-c", "echo one; echo two"])
        #expect(r.stdout.contains("plan:"), "\(r)")
        let tables = ((try? FileManager.default.contentsOfDirectory(atPath: out + "/work")) ?? []).filter { $0.hasSuffix(".table") }
        #expect(tables.isEmpty, "tables left in out/work: \(tables)")
    }
}
