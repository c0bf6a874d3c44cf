import Foundation
import Testing
import CAspectsABI
import AspectsTable

/// aspectctl's outputs and messages (issue 20, items 1, 6, 10, 11, 12): an output file is
/// written through its path and never replaces what is there; a closed or failing stdout or
/// stderr is never a crash, a leaked private table or a corrupted one; `--report-fd 1` leaves
/// the command its stdout; a busy table lock is said and waited for a bounded time; `destroy`
/// removes only what is whole enough to be a table.
@Suite struct OutputSafetyTests {
    func scratch() throws -> String {
        let dir = NSTemporaryDirectory() + "aspects-output-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    static let writeLog = #"{"id":"w","symbol":"write","position":"before","action":{"log":true}}"#
    static let neverMatches = #"{"id":"never","symbol":"unlink","position":"before","action":{"log":true}}"#
    /// Said before the command starts: its process glob matches no program of the run.
    static let warnedBeforeStart = #"{"id":"elsewhere","symbol":"unlink","position":"before","action":{"log":true},"when":{"process":"*/no-such-program"}}"#
    static let drawsASeed = #"{"id":"maybe","symbol":"getppid","position":"before","action":{"log":true},"when":{"probability":0.5}}"#

    static func kind(_ path: String) -> mode_t {
        var st = stat()
        return lstat(path, &st) == 0 ? st.st_mode & S_IFMT : 0
    }

    static func isCharDevice(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFCHR
    }

    /// A command that leaves the name of `run`'s private table in `file`, so a test can check
    /// the table is gone afterwards.
    static func tableRecorder(_ file: String) -> [String] { ["/bin/sh", "-c", "echo \"$ASPECTS_TABLE\" > '\(file)'"] }

    static func privateTableLeft(_ recorded: String) throws -> Bool {
        let name = try String(contentsOfFile: recorded, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(name.hasPrefix("run-"), "recorded table name: \(name)")
        return FileManager.default.fileExists(atPath: try TableName(name).path)
    }

    /// Starts aspectctl with its stdout and stderr as given (nil: closed) and SIGPIPE at its
    /// default, as a shell starts it; its exit status, or 128+N when signal N ended it.
    static func aspectctl(_ args: [String], stdout: Int32?, stderr: Int32?) throws -> Int32 {
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("ASPECTS_") && $0.key != "LD_PRELOAD" }
        env["ASPECTS_PRELOAD"] = Paths.library
        let (pid, watch) = try Proc.spawnAspectctl(args, environment: env, fds: [1: stdout, 2: stderr], defaultSignals: [SIGPIPE])
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        watch.finish()
        return status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    }

    // MARK: item 1: outputs are written through their path

    @Test func aReportThroughASymlinkToARegularFileKeepsTheLink() throws {
        let dir = try scratch()
        defer { TableSegments.removeScratch(dir) }
        let target = dir + "/report.json", link = dir + "/link.json"
        try "old\n".write(toFile: target, atomically: false, encoding: .utf8)
        #expect(symlink(target, link) == 0)
        let r = try Proc.aspectctl(["run", "--report-json", link, "--rule", Self.neverMatches, "--", "/bin/true"],
                                   environment: ["ASPECTS_PRELOAD": Paths.library])
        #expect(r.status == 0, "\(r)")
        #expect(Self.kind(link) == S_IFLNK, "the link is still a link")
        let written = try String(contentsOfFile: target, encoding: .utf8)
        #expect(written.hasPrefix("{") && written.contains("\"never\""), "\(written)")
    }

    @Test func outputsRefuseWhatIsNotARegularFile() throws {
        let dir = try scratch()
        defer { TableSegments.removeScratch(dir) }
        let fifo = dir + "/fifo", sub = dir + "/sub", toNull = dir + "/to-null"
        #expect(mkfifo(fifo, 0o600) == 0)
        try FileManager.default.createDirectory(atPath: sub, withIntermediateDirectories: true)
        #expect(symlink("/dev/null", toNull) == 0)
        for option in ["--report-json", "--report-file"] {
            // a device only through a link: before the fix, naming /dev/full itself replaced it
            for path in [fifo, sub, toNull] {
                let recorded = dir + "/table-name"
                TableSegments.removeScratch(recorded)
                let r = try Proc.aspectctl(["run", option, path, "--rule", Self.neverMatches, "--"] + Self.tableRecorder(recorded),
                                           environment: ["ASPECTS_PRELOAD": Paths.library])
                #expect(r.status == 125 && r.stderr.contains(option) && r.stderr.contains(path) && r.stderr.contains("not a regular file"),
                        "\(option) \(path): \(r)")
                if FileManager.default.fileExists(atPath: recorded) { #expect(try !Self.privateTableLeft(recorded)) }
            }
        }
        #expect(Self.kind(fifo) == S_IFIFO && Self.kind(sub) == S_IFDIR && Self.kind(toNull) == S_IFLNK)
        #expect(Self.isCharDevice("/dev/null"))
    }

    @Test func exploreRefusesToReplaceWhatIsNotARegularFile() throws {
        let dir = try scratch()
        defer { TableSegments.removeScratch(dir) }
        let fifo = dir + "/fifo", toNull = dir + "/to-null"
        #expect(mkfifo(fifo, 0o600) == 0)
        #expect(symlink("/dev/null", toNull) == 0)
        for (option, path) in [("--json", fifo), ("--html", toNull)] {
            let r = try Proc.aspectctl(["explore", "--function", "unlink", "--max-runs", "1", "--out", dir + "/out", option, path, "--", "/bin/true"],
                                       environment: ["ASPECTS_PRELOAD": Paths.library])
            #expect(r.status == 74 && r.stderr.contains(option) && r.stderr.contains("not a regular file"), "\(option): \(r)")
            // refused before the campaign: nothing ran, no journal was started
            #expect(!FileManager.default.fileExists(atPath: dir + "/out/journal.jsonl"), "\(option)")
        }
        #expect(Self.kind(fifo) == S_IFIFO && Self.kind(toNull) == S_IFLNK && Self.isCharDevice("/dev/null"))
    }

    // MARK: item 6: closed or failing stdout and stderr

    @Test func aClosedStderrIsNeverTheTable() throws {
        // The warning about the process glob is said before the command starts: into
        // /dev/null, not into the private table that took the free descriptor 2.
        let status = try Self.aspectctl(["run", "--expect-fired=w", "--rule", Self.writeLog, "--rule", Self.warnedBeforeStart,
                                         "--", "/bin/sh", "-c", "echo hi > /dev/null"], stdout: nil, stderr: nil)
        #expect(status == 0, "the rule fired: the table was whole")
    }

    @Test func aFailingStderrIsAnErrorAndThePrivateTableIsRemoved() throws {
        let dir = try scratch()
        defer { TableSegments.removeScratch(dir) }
        // A pipe nobody reads (`run … 2>&1 | true`): EPIPE, or SIGPIPE if not ignored.
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        close(ends[0])
        defer { close(ends[1]) }
        let full = open("/dev/full", O_WRONLY)
        defer { close(full) }
        for (label, err, extra) in [("broken pipe", ends[1], [String]()), ("full device", full, ["--report"])] {
            let recorded = dir + "/table-name"
            let status = try Self.aspectctl(["run"] + extra + ["--rule", Self.neverMatches, "--"] + Self.tableRecorder(recorded),
                                            stdout: nil, stderr: err)
            #expect(status == 125, "\(label): status \(status)")
            #expect(try !Self.privateTableLeft(recorded), "\(label): the private table is removed")
        }
        // --report-fd on the full device: the same
        let recorded = dir + "/table-name"
        let r = try Proc.run("/bin/sh", ["-c", "'\(Paths.aspectctl)' run --report --report-fd 3 --rule '\(Self.neverMatches)' -- \(Self.tableRecorder(recorded).map { "'\($0)'" }.joined(separator: " ")) 3>/dev/full"],
                             environment: ["ASPECTS_PRELOAD": Paths.library])
        #expect(r.status == 125 && r.stderr.contains("--report-fd"), "\(r)")
        #expect(try !Self.privateTableLeft(recorded))
        #expect(Self.isCharDevice("/dev/full"))
    }

    @Test func stdoutWriteErrorsExitNonZero() throws {
        let dir = try scratch()
        defer { TableSegments.removeScratch(dir) }
        let table = dir + "/t"
        #expect(try Proc.aspectctl(["create", "--table", table]).status == 0)
        for command in ["list --table '\(table)'", "list --rules --table '\(table)'", "catalog"] {
            let r = try Proc.run("/bin/sh", ["-c", "'\(Paths.aspectctl)' \(command) > /dev/full"])
            #expect(r.status == 74 && r.stderr.contains("standard output"), "\(command): \(r)")
        }
        #expect(Self.isCharDevice("/dev/full"))
    }

    @Test func followingEventsEndsWhenTheReaderGoesAway() throws {
        let dir = try scratch()
        defer { TableSegments.removeScratch(dir) }
        let table = dir + "/t"
        #expect(try Proc.aspectctl(["create", "--table", table]).status == 0)
        #expect(try Proc.aspectctl(["add", "--table", table, "--rule", Self.writeLog]).status == 0)
        _ = try Proc.run("/bin/sh", ["-c", "echo hi"], environment: Proc.preload(table: table))
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        close(ends[0])
        defer { close(ends[1]) }
        let status = try Self.aspectctl(["events", "--follow", "--table", table], stdout: ends[1], stderr: nil)
        #expect(status == 74)
    }

    @Test func addWithAClosedStderrAddsTheWholeBatch() throws {
        let dir = try scratch()
        defer { TableSegments.removeScratch(dir) }
        let table = dir + "/t"
        #expect(try Proc.aspectctl(["create", "--table", table]).status == 0)
        // the drawn seed is said after the commit
        let status = try Self.aspectctl(["add", "--table", table, "--rule", Self.drawsASeed, "--rule", Self.neverMatches],
                                        stdout: nil, stderr: nil)
        #expect(status == 0)
        let list = try Proc.aspectctl(["list", "--table", table])
        #expect(list.stdout.contains("maybe") && list.stdout.contains("never"), "\(list)")
    }

    // MARK: item 10: --report-fd 1 leaves the command its stdout

    @Test func aReportOnStdoutLeavesTheCommandItsStdout() throws {
        let r = try Proc.aspectctl(["run", "--report", "--report-fd", "1", "--rule", Self.neverMatches, "--", "/bin/sh", "-c", "echo hi"],
                                   environment: ["ASPECTS_PRELOAD": Paths.library])
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout.contains("hi\n") && r.stdout.contains("rule \"never\" never matched"), "\(r)")
        let e = try Proc.aspectctl(["run", "--report-fd", "2", "--rule", Self.neverMatches, "--", "/bin/sh", "-c", "echo oops >&2"],
                                   environment: ["ASPECTS_PRELOAD": Paths.library])
        #expect(e.stderr.contains("oops") && e.stderr.contains("never matched"), "\(e)")
    }

    // MARK: item 11: a busy table lock

    @Test(.tags(.realPrograms)) func aBusyTableLockNamesItsHolderAndTimesOut() throws {
        let dir = try scratch()
        defer { TableSegments.removeScratch(dir) }
        let table = dir + "/t"
        #expect(try Proc.aspectctl(["create", "--table", table]).status == 0)
        // flock(1) holds the table's lock until its stdin closes; "held" says it has it.
        let out = Pipe(), input = Pipe()
        let holder = try TestProcess.start("/usr/bin/flock", [table, "/bin/sh", "-c", "echo held; read x"], stdin: input, stdout: out)
        var line = Data()
        while !line.contains(10) { let d = out.fileHandleForReading.readData(ofLength: 1); if d.isEmpty { break }; line += d }
        #expect(String(decoding: line, as: UTF8.self) == "held\n")

        let now = try Proc.aspectctl(["add", "--lock-timeout", "0", "--table", table, "--rule", Self.neverMatches])
        #expect(now.status == 75, "\(now)")
        #expect(now.stderr.contains("locked by pid \(holder.pid) (flock)") && now.stderr.contains("--lock-timeout"), "\(now)")
        let waited = try Proc.aspectctl(["remove", "--all", "--lock-timeout", "0.2", "--table", table])
        #expect(waited.status == 75 && waited.stderr.contains("waiting"), "\(waited)")

        try input.fileHandleForWriting.close()
        holder.wait()
        let free = try Proc.aspectctl(["add", "--lock-timeout", "0", "--table", table, "--rule", Self.neverMatches])
        #expect(free.status == 0, "\(free)")
    }

    // MARK: item 12: destroy checks the whole header

    @Test func destroyLeavesAFileWithTheMagicButNoTableHeader() throws {
        let dir = try scratch()
        defer { TableSegments.removeScratch(dir) }
        let path = dir + "/looks-like-a-table"
        var bytes = [UInt8](repeating: 0, count: 4096)
        withUnsafeBytes(of: ASPECTS_MAGIC.littleEndian) { for (i, b) in $0.enumerated() { bytes[i] = b } }
        #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes), attributes: [.posixPermissions: 0o600]))
        let r = try Proc.aspectctl(["destroy", "--table", path])
        #expect(r.status == 65 && r.stderr.contains("not an aspects table") && r.stderr.contains("header"), "\(r)")
        #expect(FileManager.default.fileExists(atPath: path))
    }
}
