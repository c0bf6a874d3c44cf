import ArgumentParser
import AspectsCore
import AspectsExplore
import AspectsPreflight
import AspectsRules
import AspectsTable
import Foundation
#if canImport(Glibc)
import Glibc
#endif

struct Run: RunsACommand {
    static let name = "run"
    static let invocation = name

    static let configuration = CommandConfiguration(
        commandName: name,
        abstract: "Run a command under advice, in a fresh private table.",
        discussion: """
        Creates a private table, adds the rules, runs the command with LD_PRELOAD and ASPECTS_TABLE set, as the root of a new process hierarchy, removes the table and exits with the command's exit status (128+N when it was killed by signal N). SIGTERM, SIGINT or SIGHUP sent to run reach every process the command started (setsid daemons too: what is left once the command has ended is killed 2 s later); run waits for them, removes the table and exits 128+N. aspectctl's own failures exit 125, usage errors too (126: the command cannot be run, 127: not found), as `env` does.

        run's options go before the command: parsing them stops at -- or at the first word that is not one of them, the command's name, and every word from there on is the command's (--help too). An option run does not have is an error, never the command.

        Nothing injected is never silent: when no process attached the table (a static binary, LD_PRELOAD dropped on the way) or a rule never matched a call, run says so (on stderr, or --report-file/--report-fd); --expect-fired makes that exit 124.

          aspectctl run --inject 'write:error=ENOSPC:when=3' -- ./app
        """)

    @OptionGroup var sources: RuleSources

    @Flag(name: .long, help: "Print, after the command ends, how often each rule matched and fired.")
    var report = false

    @Flag(name: .long, help: "Refuse rules that can never fire (behind an instead rule without conditions, repeating another, or with a process glob the command does not match) instead of warning; nothing runs then.")
    var strict = false

    @Option(name: .customLong(BareExpectFired.name), defaultAsFlag: "all", parsing: .next, help: ArgumentHelp(
        "Exit 124 when nothing was injected as expected: bare (or =all), unless a process attached and every rule fired; =ID[,ID...], unless those rules fired (an id no rule of the run has is refused before the command starts); =N, unless the rules fired N times in all. A value goes only after =: the word after a bare --expect-fired is the command.",
        valueName: "what"))
    var expectFired: String?

    @Option(name: .customLong("report-file"), help: ArgumentHelp("Write the report, drawn seeds and warnings to this file instead of stderr (a regular file: created, or truncated and written in place; anything else is refused).", valueName: "file"))
    var reportFile: String?

    @Option(name: .customLong("report-fd"), help: ArgumentHelp("Write them to this open descriptor instead of stderr (e.g. 3 with `3>report.txt`; 1 and 2 stay the command's stdout and stderr too).", valueName: "n"))
    var reportFD: Int32?

    @Option(name: .customLong("report-json"), help: ArgumentHelp("Also write the whole run as JSON: status, attached processes, per-rule and per-program counts, warnings, events (to a regular file, as --report-file).", valueName: "file"))
    var reportJSON: String?

    @Option(name: .long, help: ArgumentHelp("Use this libaspects.so (default: next to aspectctl, or $ASPECTS_PRELOAD).", valueName: "path"))
    var preload: String?

    @Option(name: .long, help: ArgumentHelp("Use (and keep) this named table instead of a private one; it must exist.", valueName: "name"))
    var table: String?

    @Flag(name: .customLong("live-prototypes"), help: ArgumentHelp(
        "Make the run's table with --live-prototypes (see `create`): prototype rules added while the command runs apply before its next call of their function. With --table, the table must have been made so."))
    var livePrototypes = false

    @OptionGroup var lock: LockOptions

    @Argument(parsing: .captureForPassthrough, help: ArgumentHelp("The command and its arguments (after run's options, or after --).", valueName: "command"))
    var command: [String] = []

    /// aspectctl's own failures, usage errors too: kept apart from any status the command
    /// could exit with (64 is EX_USAGE of every sysexits program), as env(1) does.
    static let ownFailure: Int32 = 125

    mutating func validate() throws {
        // run is a word of aspectctl's own command line only (the root has no options)
        if CommandLine.arguments.dropFirst().first == Self.name,
           let words = try BareExpectFired.commandAfterBareOption(given: Array(CommandLine.arguments.dropFirst(2)), captured: command) {
            self = try Self.parse(words)
            return
        }
        try validateCommandWords()
        if reportFile != nil && reportFD != nil { throw ValidationError("give --report-file or --report-fd, not both") }
        if let e = expectFired, ExpectFired(e) == nil {
            throw ValidationError("--expect-fired takes all, a number of firings, or rule ids separated by commas, not \"\(e)\"")
        }
    }

    func run() throws {
        // From here on a termination signal ends what run started and its table before run
        // exits 128+N (waitForTree says how it is passed on).
        TerminationSignals.takeOver()
        ProcessTree.becomeSubreaper()
        let outcome: (status: Int32, unmet: Bool)
        do {
            outcome = try execute()
        } catch {
            Console.write("aspectctl: error: \(error)\n")
            throw ExitCode(Self.endedBy.map { Self.killedBy($0.signal) } ?? Self.ownFailure)
        }
        if let ended = Self.endedBy, !ended.fromTerminal { throw ExitCode(Self.killedBy(ended.signal)) }
        if expectFired != nil && outcome.unmet { throw ExitCode(124) }
        throw ExitCode(outcome.status)
    }

    /// The status a shell gives a process killed by `signal`.
    static func killedBy(_ signal: Int32) -> Int32 { 128 + signal }

    /// Runs the command under the rules; its status, and whether anything was not injected.
    func execute() throws(AspectsError) -> (status: Int32, unmet: Bool) {
        // Every output is checked before anything else is done, and none is opened until the
        // command is about to start (issue 30: a FIFO or device found after the command ran).
        let channel = try ReportChannel(file: reportFile, fd: reportFD)
        if let reportJSON { try OutputFile.check(reportJSON, option: "--report-json") }
        let compiled = try sources.load()
        let library = try Self.findLibrary(preload)
        let name: TableName
        let adviceTable: AdviceTable
        if let table {
            lock.apply()
            name = try TableName(table)
            adviceTable = try AdviceTable.open(name)
            if let note = adviceTable.ownerNote { try channel.say("aspectctl: note: \(note)") }
            if livePrototypes && !adviceTable.livePrototypes {
                throw AspectsError(.invalidValue, field: "--live-prototypes", "table \(name) was made without --live-prototypes (a table's own choice, fixed when it is made)",
                                   fix: "make it with `aspectctl create --live-prototypes --table \(name)`, or leave out --table")
            }
        } else {
            name = try Self.privateTableName()
            adviceTable = try AdviceTable.create(name, livePrototypes: livePrototypes)
        }
        defer { if table == nil { try? AdviceTable.destroy(name) } }
        let before = table == nil ? [] : Conflicts.existing(adviceTable)
        var ruleWarnings = RuleConflicts.find(compiled, labels: Conflicts.labels(compiled), after: before)
        if let program = try? ProgramPath.resolve(argv[0]) {
            ruleWarnings += RuleConflicts.processMismatches(compiled, labels: Conflicts.labels(compiled), program: program)
        }
        // refused before anything is added to a named table or the command starts
        if strict { try Conflicts.report(ruleWarnings, strict: true) }
        // When every rule gives its own id, a wrong one is refused before a named table that
        // other programs read ever holds a rule of this run; generated ids are known only
        // once added.
        let ownIDs = compiled.compactMap(\.rule.id)
        if ownIDs.count == compiled.count { try Self.checkExpectedIDs(expectFired, ids: ownIDs) }
        let added = try adviceTable.addRules(compiled)
        let ids = added.map(\.id)
        do {
            try Self.checkExpectedIDs(expectFired, ids: ids)
        } catch {
            // nothing of this run stays in a named table (a private one goes with the run)
            if table != nil { _ = try? adviceTable.remove(ids: added.map(\.token.description)) }
            throw error
        }
        for line in drawnSeedNotices(added) { try channel.say(line) }
        for f in ruleWarnings { try channel.say("aspectctl: warning: \(f)") }
        if let warning = Self.staticWarning(argv[0]) { try channel.say("aspectctl: warning: " + warning) }
        try channel.begin()
        let (status, started) = try Self.spawnAndWait(argv, library: library, table: name, hierarchy: adviceTable.newHierarchy())
        // A command that could not be started (126, 127) has said so; "no process attached"
        // would send the reader looking for a preload problem that is not there.
        let warnings = started ? Self.whatWasNotInjected(adviceTable, ids: ids, command: argv[0], static: Self.isStatic(argv[0])) : []
        for w in warnings { try channel.say("aspectctl: " + w) }
        let stubNotes = started ? adviceTable.stubFailureNotes(adviceTable.attachments()) : []
        for n in stubNotes { try channel.say("aspectctl: warning: " + n) }
        // What --expect-fired asked for, and whether it happened.
        var unmet = !warnings.isEmpty
        if started, let e = expectFired.flatMap(ExpectFired.init) {
            let mine = adviceTable.rules(includeRemoved: true).filter { ids.contains($0.id) }
            switch e {
            case .all: break
            case .firings(let n):
                let total = mine.reduce(UInt64(0)) { $0 &+ $1.fired }
                unmet = adviceTable.attachCount == 0 || total < n
                if total < n && adviceTable.attachCount > 0 { try channel.say("aspectctl: the rules fired \(total) time(s), fewer than the \(n) --expect-fired asks for") }
            case .rules(let named):
                unmet = adviceTable.attachCount == 0 || mine.contains { named.contains($0.id) && $0.fired == 0 }
            }
        }
        if report {
            let mine = adviceTable.rules(includeRemoved: true).filter { ids.contains($0.id) }
            var text = "aspectctl: report for \(argv[0]) (exit status \(status))\n\(Report.table(mine))\n"
            let byProgram = Stats.programLines(mine, adviceTable.attachments())
            if !byProgram.isEmpty { text += "by program:\n" + byProgram.map { "  " + $0 }.joined(separator: "\n") + "\n" }
            let bySite = Stats.siteLines(mine, adviceTable.sites(of: mine))
            if !bySite.isEmpty { text += Stats.siteHeading + ":\n" + bySite.map { "  " + $0 }.joined(separator: "\n") + "\n" }
            // the firings themselves, from the event ring (the last ones if it overran)
            let events = adviceTable.events(from: 0)
            if !events.events.isEmpty {
                text += "firings:\n"
                let shown = events.events.suffix(20)
                if events.dropped > 0 || shown.count < events.events.count {
                    text += "  (\(events.dropped + UInt64(events.events.count - shown.count)) earlier ones not shown)\n"
                }
                for e in shown { text += "  " + Events.line(e) + "\n" }
            }
            try channel.say(text)
        }
        if let reportJSON {
            let seeds = added.filter(\.seedWasDrawn).map { ($0.id, $0.seed!) }
            let doc = RunReport(command: argv, status: status, table: name.name, warnings: warnings + stubNotes, seeds: seeds).json(adviceTable, ids: ids)
            do throws(AspectsError) {
                try OutputFile.write(doc.rendered(pretty: true) + "\n", to: reportJSON, option: "--report-json")
            } catch {
                // the command ran: its status is not lost with the report
                var e = error
                e.message += "; the command \(argv[0]) ended with exit status \(status)"
                throw e
            }
        }
        return (status, unmet)
    }

    /// Every id `--expect-fired=ID,...` names is one of the run's rules: checked once the
    /// rules have their ids (generated ones too), before the command starts.
    static func checkExpectedIDs(_ expectFired: String?, ids: [String]) throws(AspectsError) {
        guard case .rules(let named)? = expectFired.flatMap(ExpectFired.init) else { return }
        for id in named where !ids.contains(id) {
            let near = ErrorNames.suggestions(for: id, in: ids)
            throw AspectsError(.noSuchRule, field: "--expect-fired", "no rule of this run has the id \"\(id)\"\(near.isEmpty ? "" : " (did you mean \(near.joined(separator: " or "))?)")",
                               fix: "ids of this run: \(ids.joined(separator: ", ")); nothing was run")
        }
    }

    /// Said before the command starts: it is a static executable, or a script whose
    /// interpreter is one, so LD_PRELOAD cannot reach it (what it starts may still be advised).
    static func staticWarning(_ command: String) -> String? {
        guard let path = try? ProgramPath.resolve(command) else { return nil }
        if let linkage = Preflight.linkage(of: path) {
            return linkage.isDynamic ? nil : "\(path) is statically linked\(linkage.isStaticPie ? " (a static-pie)" : ""): LD_PRELOAD cannot reach it; only dynamically linked programs it starts can be advised"
        }
        // a script: its interpreter is what runs
        guard let handle = FileHandle(forReadingAtPath: path), let head = try? handle.read(upToCount: 256) else { return nil }
        try? handle.close()
        let line = String(decoding: head.prefix { $0 != 10 }, as: UTF8.self)
        guard line.hasPrefix("#!") else { return nil }
        let words = line.dropFirst(2).split(separator: " ").map(String.init)
        guard var interpreter = words.first else { return nil }
        if (interpreter as NSString).lastPathComponent == "env", words.count > 1, let found = try? ProgramPath.resolve(words[1]) {
            interpreter = found
        }
        guard let linkage = Preflight.linkage(of: interpreter), !linkage.isDynamic else { return nil }
        return "\(path) is a script run by \(interpreter), which is statically linked: LD_PRELOAD cannot reach it; only dynamically linked programs it starts can be advised"
    }

    /// Whether `command` (found on PATH) is a static executable, which no preload can advise.
    static func isStatic(_ command: String) -> Bool {
        guard let path = try? ProgramPath.resolve(command), let linkage = Preflight.linkage(of: path) else { return false }
        return !linkage.isDynamic
    }

    /// What was not injected: no process attached the table, or a rule never matched a
    /// call, or never fired. Empty when everything fired.
    static func whatWasNotInjected(_ table: AdviceTable, ids: [String], command: String, static isStatic: @autoclosure () -> Bool) -> [String] {
        var lines: [String] = []
        if table.attachCount == 0 {
            var why = "no process attached the table, so nothing was injected"
            if isStatic() { why += " (\(command) is statically linked: LD_PRELOAD cannot reach it)" }
            else { why += " (the command may have dropped LD_PRELOAD or ASPECTS_TABLE, or run nothing dynamically linked)" }
            let failures = table.attachFailures
            if failures.count > 0 { why += "; \(failures.count) process(es) refused it: \(failures.lastReason)" }
            lines.append(why)
        } else {
            let rules = table.rules(includeRemoved: true).filter { ids.contains($0.id) }
            for r in rules where r.fired == 0 {
                lines.append(r.matched == 0 ? "rule \"\(r.id)\" never matched a call (\(table.attachCount) process(es) attached)"
                                            : "rule \"\(r.id)\" matched \(r.matched) call(s) but never fired")
            }
        }
        return lines
    }

    /// Where libaspects.so is: --preload, $ASPECTS_PRELOAD, next to this executable, ../lib (the
    /// tarball's prefix), or ../lib/MULTIARCH/aspects (the Debian package's /usr/bin and
    /// /usr/lib/x86_64-linux-gnu/aspects).
    static func findLibrary(_ explicit: String?) throws(AspectsError) -> String {
        let env = ProcessInfo.processInfo.environment
        var candidates: [String] = []
        if let explicit { candidates = [explicit] } else {
            if let e = env["ASPECTS_PRELOAD"], !e.isEmpty { candidates.append(e) }
            let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
            let dir = (exe as NSString).deletingLastPathComponent
            candidates += [dir + "/libaspects.so", dir + "/../lib/libaspects.so", dir + "/../lib/\(multiarch)/aspects/libaspects.so"]
        }
        for c in candidates where FileManager.default.isReadableFile(atPath: c) {
            return URL(fileURLWithPath: c).standardizedFileURL.path
        }
        throw AspectsError(.noInput, field: "--preload", "cannot find libaspects.so (looked at \(candidates.joined(separator: ", ")))",
                           fix: "build it with `swift build`, or pass --preload PATH")
    }

    /// This architecture's multiarch directory name, as Debian's dpkg-architecture says it
    /// (DEB_HOST_MULTIARCH: scripts/package/stage.sh puts the preload there).
    #if arch(x86_64)
    static let multiarch = "x86_64-linux-gnu"
    #elseif arch(arm64)
    static let multiarch = "aarch64-linux-gnu"
    #else
    #error("the preload runs on x86_64 and aarch64 (docs/aarch64.md)")
    #endif

    static func privateTableName() throws(AspectsError) -> TableName {
        var bytes = [UInt8](repeating: 0, count: 6)
        for i in bytes.indices { bytes[i] = UInt8.random(in: 0...255) }
        let suffix = bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        return try TableName("run-\(getpid())-\(suffix)")
    }

    /// The termination signal run was sent (by a process, or by the terminal), if any.
    nonisolated(unsafe) static var endedBy: TerminationSignals.Received?

    /// The command's status, and whether it started at all (126 and 127 are run's own then).
    static func spawnAndWait(_ argv: [String], library: String, table: TableName, hierarchy: String) throws(AspectsError) -> (status: Int32, started: Bool) {
        var env = ProcessInfo.processInfo.environment
        env["ASPECTS_HIERARCHY"] = hierarchy  // the command is the root of a new process hierarchy
        // Prototype rules rewrite GOT slots: with lazy binding a slot still points into the PLT
        // and the loader would overwrite the rewrite on the first call (docs/ARCHITECTURE.md
        // §5, prototype stubs).
        env["LD_BIND_NOW"] = "1"
        let existing = env["LD_PRELOAD"].map { $0.isEmpty ? "" : " " + $0 } ?? ""
        env["LD_PRELOAD"] = library + existing
        env["ASPECTS_TABLE"] = table.name
        let envp = env.map { "\($0.key)=\($0.value)" }

        // Like system(3), the terminal's SIGQUIT goes to the command alone. SIGTERM, SIGINT and
        // SIGHUP were taken over when run started (see `run()`): one sent before the command
        // starts means it never starts.
        signal(SIGQUIT, SIG_IGN)
        if let early = TerminationSignals.next(within: 0) {
            endedBy = early
            return (killedBy(early.signal), false)
        }

        var attrs = posix_spawnattr_t()
        posix_spawnattr_init(&attrs)
        defer { posix_spawnattr_destroy(&attrs) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGINT)
        sigaddset(&defaults, SIGQUIT)
        sigaddset(&defaults, SIGTERM)
        sigaddset(&defaults, SIGHUP)
        sigaddset(&defaults, SIGPIPE) // ignored by aspectctl (Console), not by the command
        posix_spawnattr_setsigdefault(&attrs, &defaults)
        // The command starts with an empty signal mask, whatever aspectctl inherited or blocks
        // itself, so that the signals a test sends it act as they would on a plain run.
        var noMask = sigset_t()
        sigemptyset(&noMask)
        posix_spawnattr_setsigmask(&attrs, &noMask)
        posix_spawnattr_setflags(&attrs, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        var pid: pid_t = 0
        let cArgs = argv.map { strdup($0) } + [nil]
        let cEnv = envp.map { strdup($0) } + [nil]
        defer { cArgs.forEach { free($0) }; cEnv.forEach { free($0) } }
        let rc = posix_spawnp(&pid, argv[0], nil, &attrs, cArgs, cEnv)
        if rc != 0 {
            Console.write("aspectctl: cannot run \(argv[0]): \(String(cString: strerror(rc)))\n")
            return (rc == ENOENT ? 127 : 126, false)
        }
        let status = try waitForTree(command: pid)
        let low = status & 0x7f
        if low == 0 { return ((status >> 8) & 0xff, true) }
        return (killedBy(low), true)
    }

    /// How long what the command left running may take to end after SIGTERM, once the
    /// command has ended of a termination signal, before it is killed.
    static let orphanGrace = 2.0

    /// Waits for the command and returns its wait status. The command stays in our process
    /// group, so an interactive one keeps the terminal's foreground; what a signal must reach
    /// is found instead as our descendants (run is their subreaper: a re-parented or setsid
    /// process stays one). A termination signal from a process (kill, timeout, a CI runner)
    /// is passed on to every descendant, new ones too as they appear, and run waits until
    /// none is left: once the command has ended, what it left (which no one else will end,
    /// and may ignore the signal, as a shell's background jobs ignore SIGINT) gets SIGTERM,
    /// then SIGKILL after `orphanGrace`; a second signal passes SIGKILL at once. One from the
    /// terminal already reached our group: it is passed on only to descendants in other
    /// groups, and the command decides whether it ends (as with system(3)). Without a signal,
    /// run waits for the command alone: what it leaves in the background is left running.
    static func waitForTree(command pid: pid_t) throws(AspectsError) -> Int32 {
        var commandStatus: Int32?
        var commandEnded = Date.distantFuture
        var passedOn = Set<pid_t>(), termed = Set<pid_t>()
        var killing = false
        while true {
            var status: Int32 = 0
            var treeEmpty = false
            reaping: while true {
                let r = waitpid(-1, &status, WNOHANG)
                if r == pid { commandStatus = status; commandEnded = Date() }
                if r > 0 { continue }
                if r == 0 { break reaping }
                if errno == EINTR { continue }
                if errno != ECHILD { throw AspectsError(.system, "waitpid failed: \(String(cString: strerror(errno)))") }
                treeEmpty = true
                break reaping
            }
            let terminating = endedBy.map { !$0.fromTerminal } ?? false
            if let s = commandStatus, treeEmpty || !terminating { return s }
            if terminating, let sig = endedBy?.signal {
                if Date().timeIntervalSince(commandEnded) > orphanGrace { killing = true }
                for p in ProcessTree.descendants() {
                    if killing { kill(p, SIGKILL); continue }
                    if passedOn.insert(p).inserted { kill(p, sig) }
                    if commandStatus != nil && sig != SIGTERM && termed.insert(p).inserted { kill(p, SIGTERM) }
                }
            }
            // Woken at once by a child's end or a signal; while ending the tree, also soon
            // enough to reach a process forked after the last look.
            guard let received = TerminationSignals.next(within: terminating ? 0.05 : 0.5) else { continue }
            if received.fromTerminal {
                let ours = getpgrp()
                for p in ProcessTree.descendants() where ProcessTree.group(of: p) != ours { kill(p, received.signal) }
                if endedBy == nil { endedBy = received }
            } else if terminating {
                killing = true
            } else {
                endedBy = received
            }
        }
    }
}
