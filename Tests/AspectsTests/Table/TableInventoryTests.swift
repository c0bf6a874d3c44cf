import Foundation
import Testing
import AspectsCore
import AspectsTable

/// `aspectctl tables` and `aspectctl gc`: a killed `run` leaves its private table in
/// /dev/shm; gc finds it (its run and attached processes gone) and removes it, and leaves
/// alone what is still in use.
@Suite(.serialized) struct TableInventoryTests {
    @Test func aKilledRunsTableIsListedAndCollected() throws {
        // a run whose command outlives a SIGKILL of aspectctl (started by a shell, in the
        // background, so that nothing here waits for the command)
        let rule = #"{"symbol":"close","position":"before","action":{"log":true}}"#
        // posix_spawn, not Foundation's Process: its child holds a pipe by which Process learns
        // of the exit, and the background command would inherit it (waiting for the sleep).
        let pidFile = NSTemporaryDirectory() + "aspects-gc-\(UUID().uuidString)"
        defer { TableSegments.removeScratch(pidFile) }
        let script = "'\(Paths.aspectctl)' run --rule '\(rule)' -- /bin/sh -c 'exec sleep 30' </dev/null >/dev/null 2>&1 & echo $! > '\(pidFile)'"
        // (the run and its command carry the token of the shell's watch: killed at its limit)
        var shell: pid_t = 0
        let words: [String] = ["/bin/sh", "-c", script]
        var argv: [UnsafeMutablePointer<CChar>?] = words.map { word in strdup(word) }
        argv.append(nil)
        let token = UUID().uuidString
        let envp = Subprocess.cStrings(ProcessInfo.processInfo.environment.merging([TestProcess.tokenVariable: token]) { $1 })
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        #expect(posix_spawn(&shell, "/bin/sh", nil, nil, argv, envp) == 0)
        let watch = TestProcess.watch(pid: shell, command: words, token: token)
        defer { watch.finish() }
        var status: Int32 = 0
        waitpid(shell, &status, 0)
        let runPID = try #require(Int32(try String(contentsOfFile: pidFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        var table = ""
        for _ in 0..<250 where table.isEmpty {
            table = ((try? FileManager.default.contentsOfDirectory(atPath: "/dev/shm")) ?? []).first { $0.hasPrefix("aspects.run-\(runPID)-") }
                .map { String($0.dropFirst("aspects.".count)) } ?? ""
            if table.isEmpty { usleep(20_000) }
        }
        #expect(!table.isEmpty)
        let path = "/dev/shm/aspects." + table
        // the command attaches; then the run dies without cleaning up
        for _ in 0..<250 where (try? AdviceTable.open(TableName(table)).attachments().contains { $0.isRunning }) != true { usleep(20_000) }
        kill(runPID, SIGKILL)

        // the command still runs: in use, not collected
        var listed = try Proc.aspectctl(["tables", "--json"])
        #expect(listed.stdout.contains("\"name\": \"\(table)\""), "\(listed.stdout)")
        #expect(try SegmentGC.serialized { try Proc.aspectctl(["gc"]) }.stdout.contains(table) == false)
        #expect(FileManager.default.fileExists(atPath: path))

        // the command gone too: left over, and gc removes it
        let sleeper = try #require(try AdviceTable.open(TableName(table)).attachments().first { $0.isRunning })
        kill(sleeper.pid, SIGKILL)
        for _ in 0..<250 where kill(sleeper.pid, 0) == 0 { usleep(20_000) }
        listed = try Proc.aspectctl(["tables"])
        let row = try #require(listed.stdout.split(separator: "\n").first { $0.hasPrefix(Substring(table)) })
        #expect(row.contains("left over by a run that is gone"), "\(row)")
        #expect(try Proc.aspectctl(["gc", "--dry-run"]).stdout.contains("would remove \(table)"))
        #expect(FileManager.default.fileExists(atPath: path))
        let gc = try SegmentGC.serialized { try Proc.aspectctl(["gc"]) }
        #expect(gc.status == 0 && gc.stdout.contains("removed \(table)"), "\(gc)")
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func gcAllTakesNamedTablesNothingRunsWithAndKeepsTheOthers() throws {
        let idle = "test-gc-idle-\(getpid())", busy = "test-gc-busy-\(getpid())"
        defer { _ = try? Proc.aspectctl(["destroy", "--table", idle]); _ = try? Proc.aspectctl(["destroy", "--table", busy]) }
        #expect(try Proc.aspectctl(["create", "--table", idle]).status == 0)
        #expect(try Proc.aspectctl(["create", "--table", busy]).status == 0)
        let user = try LiveProcess(try Fixture.build("live_loop"), ["/etc/hostname"], table: busy)
        #expect(user.call() == "ok")
        // without --all, named tables are never collected
        #expect(!(try SegmentGC.serialized { try Proc.aspectctl(["gc"]) }.stdout.contains(idle)))
        // (a pattern: other tests' tables in /dev/shm are none of this test's business)
        let gc = try Proc.aspectctl(["gc", "--all", "test-gc-*-\(getpid())"])
        #expect(gc.stdout.contains("removed \(idle)") && !gc.stdout.contains(busy), "\(gc)")
        #expect(!FileManager.default.fileExists(atPath: "/dev/shm/aspects." + idle))
        #expect(FileManager.default.fileExists(atPath: "/dev/shm/aspects." + busy))
        let row = try Proc.aspectctl(["tables"]).stdout.split(separator: "\n").first { $0.hasPrefix(Substring(busy)) }
        #expect(row?.contains("  1  ") == true, "one attached, one running: \(String(describing: row))")
        #expect(try user.finish() == 0)
    }

    /// run removes its private table when it is told to stop: SIGTERM and SIGHUP are passed
    /// to the command, SIGINT reaches the command from the terminal (its process group); run
    /// waits for it, removes the table and exits as the command did.
    @Test(arguments: [SIGTERM, SIGHUP, SIGINT])
    func runRemovesItsTableWhenStopped(_ sig: Int32) throws {
        let rule = #"{"symbol":"close","position":"before","action":{"log":true}}"#
        let words: [String] = [Paths.aspectctl, "run", "--rule", rule, "--", "/bin/sleep", "30"]
        var argv: [UnsafeMutablePointer<CChar>?] = words.map { word in strdup(word) }
        argv.append(nil)
        let token = UUID().uuidString
        let envp = Subprocess.cStrings(ProcessInfo.processInfo.environment.merging([TestProcess.tokenVariable: token]) { $1 })
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var attrs = posix_spawnattr_t()
        posix_spawnattr_init(&attrs)
        defer { posix_spawnattr_destroy(&attrs) }
        posix_spawnattr_setpgroup(&attrs, 0)   // its own process group, as a shell job
        posix_spawnattr_setflags(&attrs, Int16(POSIX_SPAWN_SETPGROUP))
        var run: pid_t = 0
        #expect(posix_spawn(&run, Paths.aspectctl, nil, &attrs, argv, envp) == 0)
        let watch = TestProcess.watch(pid: run, command: words, token: token)
        defer { watch.finish() }
        var table = ""
        for _ in 0..<250 where table.isEmpty {
            table = ((try? FileManager.default.contentsOfDirectory(atPath: "/dev/shm")) ?? []).first { $0.hasPrefix("aspects.run-\(run)-") } ?? ""
            if table.isEmpty { usleep(20_000) }
        }
        #expect(!table.isEmpty)
        let name = String(table.dropFirst("aspects.".count))
        for _ in 0..<250 where (try? AdviceTable.open(TableName(name)).attachments().contains { $0.isRunning }) != true { usleep(20_000) }
        // SIGINT as a terminal sends it: to the whole job; the others to run alone
        _ = sig == SIGINT ? kill(-run, sig) : kill(run, sig)
        var status: Int32 = 0
        waitpid(run, &status, 0)
        #expect(status & 0x7f == 0 && (status >> 8) & 0xff == 128 + sig, "run exits as the command did: \(status)")
        #expect(!FileManager.default.fileExists(atPath: "/dev/shm/" + table))
    }

    /// /proc/sysvipc/shm is handed out a page per read: with 40 more segments on the machine
    /// the list is longer than its first 4 KiB, and every one of them must be read (Foundation's
    /// String(contentsOfFile:) returned one page, and gc missed the leftovers past it); a killed
    /// create's leftover is then found wherever its line falls.
    @Test func gcReadsTheWholeSegmentList() throws {
        let crowd = try (0..<40).map { _ in try ScratchTable(rules: 1, events: 16, stats: 16) }
        let listed = ProcFile.text("/proc/sysvipc/shm") ?? ""
        #expect(listed.utf8.count > 4096)
        let ids = Set(listed.split(separator: "\n").dropFirst().compactMap { $0.split(separator: " ").dropFirst().first.flatMap { Int32($0) } })
        for t in crowd {
            let shmid = try #require(t.segment?.shmid)
            #expect(ids.contains(shmid), "segment \(shmid) is not in the list read")
        }
        let dir = crowd[0].directory + "/creates"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try Self.killedCreateIsALeftoverGcFinds(stop: "create-linking", table: dir + "/c")
    }

    /// `create TABLE` stopped at `stop` and SIGKILLed: its segment, and only it, is a leftover
    /// gc names; removed as gc removes it (taking turns with the tests that run a plain gc,
    /// which would remove it too).
    static func killedCreateIsALeftoverGcFinds(stop: String, table: String) throws {
        try SegmentGC.serialized {
            var env = ProcessInfo.processInfo.environment
            env["ASPECTS_TEST_WRITER_STOP"] = stop
            let (pid, watch) = try Proc.spawnAspectctl(["create", "--table", table], environment: env)
            #expect(WriterKillTests.waitStopped(pid), "the writer did not reach \(stop)")
            _ = WriterKillTests.kill9(pid)
            watch.finish()
            let left = LeftoverSegment.scan().filter { $0.creatorPID == pid }
            #expect(left.count == 1, "\(left)")
            let gc = try Proc.aspectctl(["gc", "--dry-run"])
            #expect(gc.stdout.contains("would remove the segment \(left.first?.shmid ?? -1) "), "\(gc)")
            try left.first?.remove()
            #expect(TableSegments.status(left.first?.shmid ?? -1) == nil)
        }
    }

    /// A `create` killed the moment its segment was made, before any of the header was
    /// written, leaves a segment gc still tells for a leftover of ours (the mark stored as it
    /// is attached) and removes. Before, its first word was 0, gc never found it, and it stayed
    /// until reboot (the random kills of WriterKillTests left one so).
    @Test func aCreateKilledBeforeItsHeaderLeavesASegmentGcFinds() throws {
        let dir = NSTemporaryDirectory() + "aspects-made-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { TableSegments.removeScratch(dir) }
        try Self.killedCreateIsALeftoverGcFinds(stop: "create-made", table: dir + "/t")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).isEmpty)
    }

    /// A table whose file went with its directory, never destroyed, has memory no name leads
    /// to. `tables` says so and gc removes it — and only it: a table whose file is there stays,
    /// and so does a new table made at the path of a deleted one (whose old memory goes) — and
    /// the registry then forgets the tables gone. Before, the segments stayed until reboot.
    @Test func gcRemovesTheMemoryOfATableWhoseFileWasDeleted() throws {
        let dir = NSTemporaryDirectory() + "aspects-orphan-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir + "/gone", withIntermediateDirectories: true)
        defer { TableSegments.removeScratch(dir) }
        func create(_ path: String) throws -> Int32 {
            let r = try Proc.aspectctl(["create", "--table", path, "--rules", "4", "--events", "16"])
            try #require(r.status == 0, "\(r)")
            return try #require(TableSegments.anchor(path)?.shmid)
        }
        let gone = try create(dir + "/gone/t"), kept = try create(dir + "/kept"), old = try create(dir + "/replaced")
        try FileManager.default.removeItem(atPath: dir + "/gone")
        try FileManager.default.removeItem(atPath: dir + "/replaced")
        let new = try create(dir + "/replaced")
        try SegmentGC.serialized {
            let tables = try Proc.aspectctl(["tables"])
            #expect(tables.stderr.contains(dir + "/gone/t") && tables.stderr.contains(dir + "/replaced,") && !tables.stderr.contains(dir + "/kept"), "\(tables)")
            let gc = try Proc.aspectctl(["gc"])
            #expect(gc.status == 0 && gc.stdout.contains("removed the table of \(dir)/gone/t ") && gc.stdout.contains("removed the table of \(dir)/replaced ")
                    && !gc.stdout.contains(dir + "/kept"), "\(gc)")
        }
        let ids = Set((ProcFile.text("/proc/sysvipc/shm") ?? "").split(separator: "\n").dropFirst()
            .compactMap { $0.split(separator: " ").dropFirst().first.flatMap { Int32($0) } })
        #expect(!ids.contains(gone) && !ids.contains(old) && ids.contains(kept) && ids.contains(new), "\(gone) \(old) \(kept) \(new)")
        for path in [dir + "/kept", dir + "/replaced"] {
            let list = try Proc.aspectctl(["list", "--table", path])
            #expect(list.status == 0, "\(path): \(list)")
        }
        let left = AnchorRegistry.records().map(\.shmid)
        #expect(!left.contains(gone) && !left.contains(old) && left.contains(kept) && left.contains(new), "\(left)")
    }

    /// The registry says only where to look, and only when it is the caller's own file that
    /// nobody else can write: a link planted at its name is neither followed nor read, a file
    /// others can write is not read, and a table whose file is at its path is no orphan.
    @Test func theAnchorRegistryIsTrustedOnlyAsTheCallersOwnFile() throws {
        let dir = NSTemporaryDirectory() + "aspects-registry-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { TableSegments.removeScratch(dir) }
        let line = "1 1 2 /nowhere/table\n"
        try line.write(toFile: dir + "/target", atomically: false, encoding: .utf8)
        #expect(symlink(dir + "/target", dir + "/link") == 0)
        AnchorRegistry.record(shmid: 7, identity: (3, 4), anchor: "/elsewhere", file: -1, at: dir + "/link")
        #expect(try String(contentsOfFile: dir + "/target", encoding: .utf8) == line, "the link was followed")
        #expect(AnchorRegistry.records(at: dir + "/link").isEmpty)
        #expect(AnchorRegistry.records(at: dir + "/target").count == 1)
        #expect(chmod(dir + "/target", 0o666) == 0)
        #expect(AnchorRegistry.records(at: dir + "/target").isEmpty, "a file others can write is read")
        // a path with a newline and a '%' comes back as it went in
        AnchorRegistry.record(shmid: 9, identity: (5, 6), anchor: "/a%25b\nc", file: -1, at: dir + "/own")
        #expect(AnchorRegistry.records(at: dir + "/own").map(\.anchor) == ["/a%25b\nc"])
        // a live table made by a process that is gone, its file in place: not an orphan
        let created = try Proc.aspectctl(["create", "--table", dir + "/live", "--rules", "4", "--events", "16"])
        try #require(created.status == 0, "\(created)")
        let shmid = try #require(TableSegments.anchor(dir + "/live")?.shmid)
        #expect(!AnchorRegistry.orphans().contains { $0.shmid == shmid })
        #expect(AnchorRegistry.records().contains { $0.shmid == shmid && $0.anchor == dir + "/live" })
    }

    /// A named table whose file is in another mount namespace (systemd's PrivateTmp, a
    /// container sharing the IPC namespace) is judged where it was made: while a process of
    /// that namespace is left, gc looks at the path through it and keeps the live table; once
    /// none is, the table is "not checkable here", said and kept. Before, gc's own lstat said
    /// ENOENT and removed a live table.
    @Test(.tags(.realPrograms), .requires(geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare"), "needs root and unshare (util-linux)"))
    func gcJudgesATableFileInTheMountNamespaceItWasMadeIn() throws {
        let dir = NSTemporaryDirectory() + "aspects-mntns-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir + "/private", withIntermediateDirectories: true)
        defer { TableSegments.removeScratch(dir) }
        // a namespace of its own with a tmpfs at dir/private, the table made there, and a
        // process left in it (the shell becomes the sleep); `ready` is outside the tmpfs
        let script = #"mount -t tmpfs none "$1/private" && "$2" create --table "$1/private/t" --rules 4 --events 16 >/dev/null && : > "$1/ready" && exec sleep 60"#
        let holder = try Proc.start("/usr/bin/unshare", ["--mount", "--propagation", "private", "/bin/sh", "-c", script, "sh", dir, Paths.aspectctl])
        defer { holder.signal() }
        for _ in 0..<600 where !FileManager.default.fileExists(atPath: dir + "/ready") && holder.isRunning { usleep(50_000) }
        try #require(FileManager.default.fileExists(atPath: dir + "/ready"), "the namespace's create did not finish")
        let anchor = try #require(TableSegments.anchor("/proc/\(holder.pid)/root\(dir)/private/t"))
        defer { _ = shmctl(anchor.shmid, IPC_RMID, nil) }
        #expect(!FileManager.default.fileExists(atPath: dir + "/private/t"), "the file is not visible from here")
        try SegmentGC.serialized {
            let gc = try Proc.aspectctl(["gc"])
            #expect(gc.status == 0 && !gc.stdout.contains(dir), "\(gc)")
            #expect(TableSegments.status(anchor.shmid) != nil, "gc removed a live table: \(gc)")
            let tables = try Proc.aspectctl(["tables"])
            #expect(!tables.stderr.contains(dir), "\(tables)")
        }
        holder.signal()
        holder.wait()
        try SegmentGC.serialized {
            let gc = try Proc.aspectctl(["gc"])
            #expect(gc.status == 0 && !gc.stdout.contains(dir), "\(gc)")
            #expect(gc.stderr.contains("the table of \(dir)/private/t") && gc.stderr.contains("not checkable here")
                    && gc.stderr.contains("ipcrm -m \(anchor.shmid)"), "\(gc)")
            #expect(TableSegments.status(anchor.shmid) != nil, "gc removed a table it could not judge")
        }
    }

    /// A registry line keeps where the anchor was made (namespace, device, inode); a line
    /// written before that was recorded still reads, with no place (then never an orphan).
    @Test(.tags(.fast)) func registryLinesKeepTheAnchorsPlace() {
        let placed = AnchorRegistry.Record(shmid: 5, identity: (0xab, 0xcd), anchor: "/t/a b", place: AnchorPlace(mountNamespace: 4026531832, device: 64769, inode: 12))
        #expect(placed.line == "5 ab cd @4026531832:64769:12 /t/a b\n")
        #expect(AnchorRegistry.Record(line: Substring(placed.line.dropLast())) == placed)
        let old = AnchorRegistry.Record(line: "5 ab cd /t/a b")
        #expect(old?.anchor == "/t/a b" && old?.place == nil)
        #expect(AnchorRegistry.Record(line: "5 ab cd @1:2 /t") == nil, "a place of two numbers")
    }

    /// Something at the registry's name that is not the caller's own file is said, not
    /// silently skipped: the tables whose file was deleted cannot be found then.
    @Test func aRegistryThatIsNotTheCallersOwnIsSaid() throws {
        let dir = NSTemporaryDirectory() + "aspects-registry-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { TableSegments.removeScratch(dir) }
        #expect(AnchorRegistry.problem(at: dir + "/none") == nil)
        try "".write(toFile: dir + "/own", atomically: false, encoding: .utf8)
        #expect(chmod(dir + "/own", 0o600) == 0)
        #expect(AnchorRegistry.problem(at: dir + "/own") == nil)
        #expect(symlink(dir + "/own", dir + "/link") == 0)
        #expect(AnchorRegistry.problem(at: dir + "/link")?.contains("is a symbolic link") == true)
        #expect(chmod(dir + "/own", 0o622) == 0)
        #expect(AnchorRegistry.problem(at: dir + "/own")?.contains("can be written by others") == true)
        if geteuid() == 0 {
            #expect(chown(dir + "/own", 1, 1) == 0 && chmod(dir + "/own", 0o600) == 0)
            #expect(AnchorRegistry.problem(at: dir + "/own")?.contains("not to you") == true)
        }
    }

    /// gc PATTERN names a table whose file is gone by the file's name too, as it names the
    /// tables in /dev/shm ('ci-*').
    @Test(.tags(.fast)) func aPatternMatchesAnOrphansPathOrItsFileName() {
        #expect(GCPattern.matches("ci-*", anchor: "/tmp/x/ci-7"))
        #expect(GCPattern.matches("/tmp/x/*", anchor: "/tmp/x/ci-7"))
        #expect(!GCPattern.matches("ci-*", anchor: "/tmp/ci-x/other"))
    }
}
