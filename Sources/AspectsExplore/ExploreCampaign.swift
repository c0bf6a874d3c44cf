#if canImport(Glibc)
import Glibc
#endif
import Foundation
import CAspectsABI
import AspectsCore
import AspectsPreflight
import AspectsRules
import AspectsTable

/// What `aspectctl explore` was asked to do.
package struct ExploreOptions: Sendable {
    package var command: [String]
    /// Functions to fail; empty with `imported`: every catalog function the program imports.
    package var functions: [String] = []
    /// Catalog families (`write`, `read` ...) whose every member is a function to fail.
    package var families: [String] = []
    package var imported = false
    /// Codes to inject; a function gets those it can produce, or its default when none.
    package var errnos: [String] = []
    package var strategy: FaultPoint.Strategy = .both
    /// How fault points fail their calls (`--fault`); empty: error.
    package var faults: [FaultKind] = []
    /// `--process` globs: only images whose path one matches are planned (none: every image).
    package var processes: [String] = []
    /// `--strategy context`: return addresses in a context, the call site first.
    package var contextDepth = 3
    package var setup: String?
    package var check: String?
    package var jobs = 2
    /// Seconds; nil: 2 s. A run gets at least 10 × the baseline's wall time (`RunTimeouts`).
    package var timeout: Double?
    package var maxRuns = 2000
    package var outDirectory = "aspects-explore"
    package var seed: UInt64 = 0
    /// libaspects.so
    package var library: String
    /// How many times the baseline runs (at least 2): runs that differ with no fault mean the
    /// runs of the campaign are not independent.
    package var baselines = 2
    /// The aspectctl that reproducer scripts run (the absolute path of the one exploring).
    package var aspectctl = "aspectctl"
    /// Keep every run's working directory and output files in OUT/work (`--keep-work`);
    /// by default only findings' stay.
    package var keepWork = false
    /// Count a deliberate stop for want of memory as a bug (`--fail-fast-is-bug`): such an
    /// abort is a crash like any other.
    package var failFastIsBug = false
    /// The baseline's exit status when the user says it (`--expect-status`); nil: whatever
    /// the baseline exits with, when it exits so every time (diff exits 1 when files differ).
    package var expectStatus: Int32?
    /// The directory every run starts in, when the command must run in its own (a ctest
    /// test's WORKING_DIRECTORY); nil: a fresh one per run. Files the runs leave there are not
    /// compared with the baseline's (`silentDifferences` needs fresh directories).
    package var directory: String?

    package init(command: [String], library: String) {
        self.command = command
        self.library = library
    }
}

/// One run of a campaign.
package struct ExploreResult: Sendable {
    package var index: Int
    package var point: FaultPoint
    package var outcome: ExploreOutcome
    package var record: RunRecord
    /// Findings: the rules file that reproduces it, and whether the re-run did.
    package var reproducer: String?
    package var reproduced: Bool?
    /// Findings: the fault the reproducer makes — the point itself for a site point; for a
    /// k-th call point, that call named by its site and its number among the site's calls.
    package var reproducerPoint: FaultPoint?
    /// Findings: the script that reproduces it (`Reproducer`).
    package var reproducerScript: String?
}

/// A whole campaign: the baseline, the plan, every run.
package struct ExploreReport: Sendable {
    package var command: [String]
    package var baseline: RunRecord
    package var profiles: [FunctionProfile]
    package var plan: ExplorePlan
    package var results: [ExploreResult]
    package var timeout: Double
    package var seed: UInt64
    package var seconds: Double
    /// --setup, which the reproducer's command line runs first.
    package var setup: String?
    /// Source locations of the sites whose objects have debug information.
    package var locations: [CallSite: String] = [:]
    /// The chosen functions as the baseline saw them, and what it said of them.
    package var coverage = ExploreCoverage()
    /// The baseline's repeated runs, and how they differed.
    package var baselines: BaselineComparison?
    /// The whole plan's id and number of points, and the shard of it this report ran (nil: all
    /// of it); shards of one plan merge (`ReportMerge`). The id is the plan's own (`ExplorePlan.id`),
    /// kept when a report read back holds only its shard's points.
    package var planID: String {
        get { plan.id }
        set { plan.id = newValue }
    }
    package var plannedPoints = 0
    package var shard: ExploreShard?
    package var findings: [ExploreResult] { results.filter { $0.outcome.isFinding } }
}

/// Runs a campaign: the baseline with log-only advice (which functions are called how often,
/// from where), then one run per fault point, each with a private table and working directory.
package final class ExploreCampaign: @unchecked Sendable {
    package let options: ExploreOptions
    package let catalog: Catalog
    let out: String
    let baseEnvironment: [String: String]
    /// libaspects.so's file name, as sites name objects.
    var preloadName: String { CallSurvey.siteObject(ofPreload: options.library) }
    /// After the baseline: function → the name each call came by → calls (`pwrite` → `pwrite64`).
    package private(set) var calledNames: [String: [String: UInt64]] = [:]
    /// function → calls of the baseline whose site its survey passes did not learn (a program
    /// that makes more calls than the passes' rings hold: CallSurvey).
    package private(set) var unsurveyedCalls: [String: UInt64] = [:]
    /// What the baselines left in their directories (`repeatBaseline`), for silent differences.
    var baselineFiles: BaselineFiles?

    package init(options: ExploreOptions, catalog: Catalog = .builtIn) throws(AspectsError) {
        var options = options
        // Runs start in their own directories: a relative program path is taken from here.
        if let first = options.command.first, first.contains("/"), !first.hasPrefix("/") {
            options.command[0] = URL(fileURLWithPath: FileManager.default.currentDirectoryPath + "/" + first).standardizedFileURL.path
        }
        self.options = options
        self.catalog = catalog
        let dir = options.outDirectory.hasPrefix("/") ? options.outDirectory
            : FileManager.default.currentDirectoryPath + "/" + options.outDirectory
        out = URL(fileURLWithPath: dir).standardizedFileURL.path
        baseEnvironment = CallSurvey.environment()
        do {
            try FileManager.default.createDirectory(atPath: out + "/work", withIntermediateDirectories: true)
        } catch {
            throw AspectsError(.system, field: "--out", "cannot create \(out)/work: \(error.localizedDescription)")
        }
    }

    // MARK: - which functions

    /// The functions of the campaign: those named, or with `imported` every catalog function
    /// the program and its libraries import; one per alias group (its first name).
    package func chosenFunctions() throws(AspectsError) -> [String] {
        var names = options.functions
        for family in options.families {
            guard let members = catalog.families[family] else {
                throw AspectsError(.unknownSymbol, field: "--family", "\(family) is not a catalog family",
                                   fix: "use one of \(catalog.families.keys.sorted().joined(separator: ", "))")
            }
            names += members
        }
        if options.imported || (names.isEmpty && options.families.isEmpty) {
            let program = try ProgramPath.resolve(options.command[0])
            let preflight = try Preflight(binary: program, catalog: catalog)
            guard preflight.isDynamic else {
                throw AspectsError(.invalidValue, field: "command", "\(program) is statically linked: no LD_PRELOAD library can advise it",
                                   fix: "explore a dynamically linked program")
            }
            names += preflight.catalogImports.map(\.name)
        }
        var seen = Set<Int>(), chosen: [String] = []
        for n in names {
            guard let f = catalog.function(named: n) else {
                throw AspectsError(.unknownSymbol, field: "--function", "\(n) is not in the catalog", fix: "see `aspectctl catalog`")
            }
            let g = catalog.group(of: f)
            if g.failure.returnValue(for: 1) == nil || g.isNoReturn { continue } // cannot fail: nothing to inject
            if seen.insert(f.groupIndex).inserted { chosen.append(f.name) }
        }
        guard !chosen.isEmpty else {
            throw AspectsError(.invalidValue, field: "--function", "no function that can fail was chosen",
                               fix: "name functions with --function, or use --imported")
        }
        return chosen.sorted()
    }

    /// The codes to inject into `function`: those asked for that it can produce, else its default.
    package func errnos(for function: String) -> [String] {
        guard let f = catalog.function(named: function) else { return [] }
        let g = catalog.group(of: f)
        let possible = options.errnos.filter { g.errnos.contains($0) }
        if !possible.isEmpty { return possible }
        return [g.defaultErrno ?? g.errnos.first ?? "EIO"]
    }

    // MARK: - runs

    /// A fresh working directory, prepared by --setup.
    func prepare(_ name: String) throws(AspectsError) -> String {
        let dir = options.directory ?? out + "/work/" + name
        if options.directory == nil { try Self.freshDirectory(dir) }
        if let setup = options.setup {
            let r = try ProgramRun(argv: ["/bin/sh", "-c", setup], environment: baseEnvironment, directory: dir, timeout: 60)
                .run(outputPrefix: dir + ".setup")
            guard r.exitStatus == 0 else {
                throw AspectsError(.invalidValue, field: "--setup", "the setup command failed in \(dir) (status \(r.exitStatus.map(String.init) ?? "signal \(r.signal ?? 0)")): \(r.stderr.suffix(300))",
                                   fix: "make `sh -c SETUP` succeed in an empty directory")
            }
        }
        return dir
    }

    /// Runs the command once in `name`'s directory under `rules`; the record and the table.
    func runOnce(_ name: String, rules: String, timeout: Double, events: Int = 256,
                 statistics: Int = Int(ASPECTS_DEFAULT_STAT_CAPACITY)) throws(AspectsError) -> (RunRecord, AdviceTable, String) {
        let dir = try prepare(name)
        let tableName = try TableName(out + "/work/" + name + ".table")
        // a table left by an earlier campaign: its segment too (AdviceTable.destroy); looked
        // for first, since a new campaign's runs find none and a destroy walks the path
        var st = stat()
        if lstat(tableName.path, &st) == 0 {
            try? AdviceTable.destroy(tableName)
            unlink(tableName.path)
        }
        let compiled = try RuleCompiler(catalog: catalog).compile(try RuleDecoder(source: "explore").decode(rules))
        // As many slots as rules (the baseline logs every chosen function: python3 imports 124
        // of the catalog's; a fault run has one): reading the table back touches every slot.
        let table = try AdviceTable.create(tableName, ruleCapacity: max(1, compiled.count), eventCapacity: events, statCapacity: statistics)
        try table.add(compiled)
        // ASPECTS_RECORD_CRASH: every process of the tree records the crash signal that ends it
        // (crash.c), since the command's own status shows only its own; and its stack in
        // ASPECTS_CRASH_DIR.
        let crashDir = out + "/work/" + name + ".crash"
        try Self.freshDirectory(crashDir)
        var run = ProgramRun(argv: options.command, environment: baseEnvironment,
                             programEnvironment: ["LD_PRELOAD": options.library, "ASPECTS_TABLE": tableName.name,
                                                  "ASPECTS_HIERARCHY": table.newHierarchy(), "ASPECTS_RECORD_CRASH": "1",
                                                  "ASPECTS_CRASH_DIR": crashDir],
                             directory: dir, timeout: timeout)
        // The run's table name is its own: what it left running is found by it.
        run.marker = "ASPECTS_TABLE=" + tableName.name
        let ran = Result { () throws(AspectsError) -> RunRecord in try run.run(outputPrefix: out + "/work/" + name) }
        // Everything the campaign reads of the table (counts, events, attachments) it reads
        // through its attachment, which outlives the table's removal (the segment goes when
        // the campaign detaches); the table (a baseline's has the largest event
        // ring there is, hundreds of MB of address space) is not left in OUT/work, a finding's neither: its reproducer is the rules
        // file. Destroyed whatever became of the run: a table left here outlives the files
        // (its segment), and no gc finds it.
        try? table.destroy()
        // A run the interruption killed (or whose child its sweep reaped) is no outcome: it is
        // neither journaled nor reported, and nothing after it is.
        if ExploreInterruption.isEnding { throw ExploreInterruption.interrupted }
        var record = try ran.get()
        // A process ended by a crash signal, or whose own handler caught one and did not return
        // (m4's "internal error detected"): a crash either way, with the stack the recorder
        // took before the handler ran. A handler that returned took back its mark (crash.c).
        record.crashes = table.attachments().compactMap { a in
            let caught = a.crashSignal == nil ? a.crashCaught : nil
            return (a.crashSignal ?? caught).map { ProcessCrash(pid: a.crashPID ?? a.pid, program: a.program, signal: $0,
                                                               stack: CrashStack.read(directory: crashDir, pid: a.crashPID ?? a.pid),
                                                               caughtByHandler: caught != nil) }
        }
        return (record, table, dir)
    }

    /// What the check is told about a run: the fault (empty for the baseline), the run's exit
    /// status as a shell gives it (128+N for signal N) and the files holding its stdout and
    /// stderr. Reproducer scripts set the same names (`Reproducer`).
    static func checkVariables(point: FaultPoint?, run: String, status: String, stdout: String, stderr: String) -> [(String, String)] {
        [("ASPECTS_EXPLORE_IMAGE", point?.image ?? ""), ("ASPECTS_EXPLORE_FUNCTION", point?.function ?? ""),
         ("ASPECTS_EXPLORE_SITE", (point?.site ?? point?.context?.first)?.description ?? ""),
         ("ASPECTS_EXPLORE_NTH", point.map { String($0.nth) } ?? ""), ("ASPECTS_EXPLORE_ERRNO", point?.errno ?? ""),
         ("ASPECTS_EXPLORE_FAULT", point?.kind.rawValue ?? ""), ("ASPECTS_EXPLORE_RUN", run), ("ASPECTS_EXPLORE_STATUS", status),
         ("ASPECTS_EXPLORE_STDOUT", stdout), ("ASPECTS_EXPLORE_STDERR", stderr)]
    }

    /// Runs --check in `dir` after `record`'s run; true when it passed (nil: no check).
    func check(_ dir: String, point: FaultPoint?, record: RunRecord, outcomeHint: String) throws(AspectsError) -> Bool? {
        guard let check = options.check else { return nil }
        var env = baseEnvironment
        for (k, v) in Self.checkVariables(point: point, run: outcomeHint, status: String(record.shellStatus),
                                          stdout: record.stdoutPath, stderr: record.stderrPath) { env[k] = v }
        let r = try ProgramRun(argv: ["/bin/sh", "-c", check], environment: env, directory: dir, timeout: 60).run(outputPrefix: dir + ".check")
        return r.exitStatus == 0
    }

    // MARK: - the baseline

    /// Runs the command with log-only advice on every chosen function (`CallSurvey`), pass
    /// after pass until every call's site is known (the event ring holds 2^20 calls per pass;
    /// 16 passes at most: what they leave is `unsurveyedCalls`, which the coverage says).
    package func baseline(functions: [String]) throws(AspectsError) -> (RunRecord, [FunctionProfile]) {
        let (record, profiles, _) = try survey(functions: functions)
        return (record, profiles)
    }

    /// The baseline with the images of its tree, in exec order.
    package func survey(functions: [String]) throws(AspectsError) -> (RunRecord, [FunctionProfile], [ProgramImage]) {
        var survey = CallSurvey(functions: functions, preload: options.library)
        if let program = try? ProgramPath.resolve(options.command[0]) { survey.knownPrograms = [ProcessGlob.image(of: program)] }
        survey.recordContexts = options.strategy == .context
        var first: RunRecord?
        for pass in 0..<16 {
            let pending = survey.pending
            if pending.isEmpty { break }
            let timeout = RunTimeouts.survey(user: options.timeout, contexts: survey.recordContexts)
            // Every (process, rule) its statistics entry: the calls per image are read from them.
            let (record, table, dir) = try runOnce("baseline-\(pass)", rules: survey.rules(for: pending), timeout: timeout,
                                                   events: Int(ASPECTS_MAX_EVENT_CAPACITY), statistics: Int(ASPECTS_MAX_STAT_CAPACITY))
            if pass == 0 {
                guard !record.timedOut else {
                    throw AspectsError(.invalidValue, field: "command", "the baseline run (no fault) did not end within \(Int(timeout)) s",
                                       fix: "give a larger --timeout, or a command that ends by itself")
                }
                guard record.signal == nil else {
                    throw AspectsError(.invalidValue, field: "command", "the baseline run (no fault) was killed by signal \(record.signal!): \(record.stderr.suffix(300))",
                                       fix: "explore a command that succeeds without faults")
                }
                if let expected = options.expectStatus, record.exitStatus != expected {
                    throw AspectsError(.invalidValue, field: "--expect-status", "the baseline run (no fault) exited with status \(record.exitStatus!), not \(expected) as --expect-status says: \(record.stderr.suffix(300))",
                                       fix: "give the status the command exits with when nothing fails, or prepare its files with --setup")
                }
                if try check(dir, point: nil, record: record, outcomeHint: "baseline") == false {
                    throw AspectsError(.invalidValue, field: "--check", "the check fails after the baseline run, with no fault injected",
                                       fix: "make the check pass on a normal run")
                }
                first = record
            }
            survey.record(table, pending: pending)
        }
        calledNames = survey.names
        unsurveyedCalls = survey.unsurveyed
        return (first!, survey.profiles, survey.images)
    }

    // MARK: - the campaign

    /// Runs every point of `plan` (-j at a time) — with a `shard`, only that shard's; with
    /// `done` (a journal read back, `--resume`), only those not done — then re-runs each finding
    /// once with its reproducer. Each finished run goes to `journal`. `progress(done, total,
    /// findings)` after each run.
    package func execute(plan: ExplorePlan, baseline: RunRecord, profiles: [FunctionProfile], shard: ExploreShard? = nil,
                        journal: CampaignJournal? = nil, done: [ExploreResult] = [],
                        progress: @escaping @Sendable (Int, Int, Int) -> Void) throws(AspectsError) -> ExploreReport {
        let started = Date()
        let timeout = RunTimeouts.run(user: options.timeout, baseline: baseline.seconds)
        let mine = shard?.indices(of: plan.points.count) ?? Array(plan.points.indices)
        let finished = Set(done.map(\.index))
        let state = CampaignState(indices: mine.filter { !finished.contains($0) }, done: done.count,
                                  findings: done.filter { $0.outcome.isFinding }.count)
        let workers = max(1, min(options.jobs, mine.count))
        let group = DispatchGroup()
        for _ in 0..<workers {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                while let i = state.take() {
                    do {
                        let r = try self.runPoint(i, plan.points[i], baseline: baseline, timeout: timeout)
                        try journal?.append(r)
                        let (count, findings) = state.finish(r)
                        progress(count, mine.count, findings)
                    } catch {
                        state.fail(error)
                    }
                }
            }
        }
        group.wait()
        if let failure = state.failure { throw failure }
        var all = (done + state.results).sorted { $0.index < $1.index }
        ExploreReport.symbolizeCrashStacks(&all)
        try confirm(&all, baseline: baseline, timeout: timeout)
        var report = ExploreReport(command: options.command, baseline: baseline, profiles: profiles, plan: plan, results: all,
                                   timeout: timeout, seed: options.seed, seconds: Date().timeIntervalSince(started), setup: options.setup)
        (report.planID, report.plannedPoints, report.shard) = (plan.id, plan.points.count, shard)
        if let program = try? ProgramPath.resolve(options.command[0]) {
            // Sites are named by file name: each image of the tree is an object they may be in.
            let images = Set(profiles.flatMap { $0.images.keys }).filter { $0.hasPrefix("/") }.subtracting([program]).sorted()
            report.locations = SiteSymbolizer.forPrograms([program] + images).locations(of: Set(profiles.flatMap { $0.sites.keys })
                .union(plan.points.flatMap { $0.context ?? [] }))
        }
        try writeScripts(&report)
        return report
    }

    /// Writes each finding's `repro-N.sh` next to its rules file (mode 0755).
    func writeScripts(_ report: inout ExploreReport) throws(AspectsError) {
        for k in report.results.indices where report.results[k].outcome.isFinding {
            guard let rules = report.results[k].reproducer else { continue }
            let path = Reproducer.scriptPath(forRules: rules)
            let text = Reproducer.script(for: report.results[k], in: report, aspectctl: options.aspectctl, check: options.check)
            try OutputFile.write(text, to: path, option: "--out", mode: 0o755)
            report.results[k].reproducerScript = path
        }
    }

    /// The work queue (plan indices still to run) and results shared by the worker threads.
    final class CampaignState: @unchecked Sendable {
        private let lock = NSLock()
        private let indices: [Int]
        private var next = 0, done: Int, findings: Int
        private(set) var results: [ExploreResult] = []
        private(set) var failure: AspectsError?

        init(indices: [Int], done: Int, findings: Int) {
            (self.indices, self.done, self.findings) = (indices, done, findings)
        }

        func take() -> Int? {
            lock.withLock {
                guard failure == nil, next < indices.count else { return nil }
                next += 1
                return indices[next - 1]
            }
        }

        func finish(_ r: ExploreResult) -> (Int, Int) {
            lock.withLock {
                results.append(r)
                done += 1
                if r.outcome.isFinding { findings += 1 }
                return (done, findings)
            }
        }

        func fail(_ error: Error) {
            lock.withLock { if failure == nil { failure = (error as? AspectsError) ?? AspectsError(.system, "\(error)") } }
        }
    }

    /// A k-th call point's fault named by its site: the site of the call that failed and its
    /// number among that site's calls in the image (counted over the tree, as the point counts),
    /// so that the reproducer still fails that call when other threads or processes call the
    /// function in between. The point runs once more with a log rule on the image's first k
    /// calls of the function (at most k events, so a program that loops after the fault
    /// cannot overrun the ring): the fault's event names the site; the log events from that
    /// site up to the fault's call number give the count. nil when it cannot be told (the
    /// fault did not fire again, its event was lost, or the call came from the preload itself,
    /// where no site rule reaches it): the reproducer then keeps the call number alone.
    func locate(_ r: ExploreResult, timeout: Double) throws(AspectsError) -> FaultPoint? {
        let p = r.point
        // A persistent fault fails every call from k on: no one site's.
        guard p.kind != .persistent else { return nil }
        let name = "locate-\(r.index)"
        var capacity = 256
        while capacity < Int(ASPECTS_MAX_EVENT_CAPACITY) && UInt64(capacity) < p.nth &* 4 &+ 64 { capacity *= 2 }
        let (_, table, _) = try runOnce(name, rules: "[" + p.ruleJSON + "," + p.logRuleJSON(id: "locate", times: p.nth) + "]",
                                        timeout: timeout, events: capacity)
        let events = table.events(from: 0).events
        removeWork(name)
        guard let fault = events.first(where: { $0.rule == "explore" && $0.kind == "fired" }),
              let site = fault.site, site.object != preloadName else { return nil }
        // The log rule counts the same calls as the point: the failed call is its call k.
        let count = UInt64(events.filter { $0.rule == "locate" && $0.site == site && $0.callNumber <= p.nth }.count)
        guard count > 0 else { return nil }
        var located = p
        (located.site, located.nth) = (site, count)
        return located
    }

    /// Removes run `name`'s working directory and files from OUT/work, unless --keep-work.
    func removeWork(_ name: String) {
        guard !options.keepWork else { return }
        let base = out + "/work/" + name
        Self.remove(base)
        Self.remove(base + ".crash")
        let setup = options.setup == nil ? [] : [".setup.stdout", ".setup.stderr"]
        let check = options.check == nil ? [] : [".check.stdout", ".check.stderr"]
        for suffix in [".table", ".stdout", ".stderr"] + setup + check {
            unlink(base + suffix)
        }
    }

    /// Removes a run's directory (its working or crash directory): rmdir first (a crash
    /// directory is most often empty), the whole tree when the program filled it, unlink
    /// when it is no directory now.
    static func remove(_ path: String) {
        if rmdir(path) == 0 || errno == ENOENT || (errno == ENOTDIR && unlink(path) == 0) { return }
        let dir = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard dir >= 0 else { return }
        removeEntries(of: dir)
        rmdir(path)
    }

    /// Removes what the directory `dir` holds, each directory in it with its own entries,
    /// following no link; closes `dir`. (FileManager's removeItem, which did this, cost more
    /// than the rest of a short run's bookkeeping: the sqlite3 shell's run leaves its file.)
    static func removeEntries(of dir: Int32) {
        guard let stream = fdopendir(dir) else {
            System.close(dir)
            return
        }
        defer { closedir(stream) }
        var names: [[CChar]] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { Array($0.prefix { $0 != 0 }.map { CChar(bitPattern: $0) }) + [0] }
            if name != [46, 0] && name != [46, 46, 0] { names.append(name) }  // not . or ..
        }
        for name in names where unlinkat(dir, name, 0) != 0 && errno == EISDIR {
            let sub = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            if sub >= 0 { removeEntries(of: sub) }
            unlinkat(dir, name, AT_REMOVEDIR)
        }
    }

    /// `path` as a new empty directory, whatever was there (a previous campaign's run).
    static func freshDirectory(_ path: String) throws(AspectsError) {
        if mkdir(path, 0o777) == 0 { return }
        remove(path)
        guard mkdir(path, 0o777) == 0 else {
            throw AspectsError(.system, field: "--out", "cannot create \(path): \(System.errnoText(errno))",
                               fix: "give an --out directory you can write")
        }
    }

    /// The statistics entries of a fault run's table. The run reads only its rule's `fired`,
    /// which counts a process that found no entry in the rule's own slot, so the fewest there
    /// can be lose nothing; reading back the default 4,096 made the segment's 40 pages of
    /// them, zeroed, on every run.
    static let faultRunStatistics = 16

    /// Run `i`'s name in OUT/work: `run-00012`.
    static func runName(_ i: Int) -> String { "run-" + fiveDigits(i) }

    /// `i` with zeros before it to five digits, as `%05d` gives it (`String(format:)` cost a
    /// run tens of microseconds).
    static func fiveDigits(_ i: Int) -> String {
        let digits = String(i)
        return String(repeating: "0", count: max(0, 5 - digits.count)) + digits
    }

    func runPoint(_ i: Int, _ point: FaultPoint, baseline: RunRecord, timeout: Double, name: String? = nil) throws(AspectsError) -> ExploreResult {
        let runName = name ?? Self.runName(i)
        let rules = "[" + point.ruleJSON + "]"
        var (record, table, dir) = try runOnce(runName, rules: rules, timeout: timeout, statistics: Self.faultRunStatistics)
        let fired = (table.rules().first { $0.id == "explore" }?.fired ?? 0) > 0
        let checked = fired && !record.timedOut && record.crashSignal == nil ? try check(dir, point: point, record: record, outcomeHint: "fault") : nil
        let failFast = !options.failFastIsBug && FailFast.applies(record, point: point, baseline: baseline)
        var outcome = record.outcome(against: baseline, fired: fired, checkPassed: checked, failFast: failFast)
        // Without a check, a run that ended as the baseline did — its status the claim that
        // all went well — is compared with it by what it left: another file or lost stdout is
        // a silent difference. One that wrote something new to stderr on the way is one only
        // by the files it left (bison warns about m4's broken output, exits 0 and leaves it:
        // the status is what a build goes by); its lost stdout it has told of beside it (a
        // shell's failed echo, "I/O error", and the script goes on). `(stderr)` then leads the
        // differences.
        if options.check == nil, options.directory == nil, outcome == .absorbed || outcome == .handled,
            record.exitStatus == baseline.exitStatus
        {
            let said = !record.sameStderr(as: baseline)
            record.differingFiles = try silentDifferences(record, in: dir, name: runName, baseline: baseline, timeout: timeout)
                .filter { !said || $0 != BaselineFiles.stdoutName }
            if !record.differingFiles.isEmpty {
                outcome = .silentDifference
                if said { record.differingFiles.insert(BaselineFiles.stderrName, at: 0) }
            }
        }
        var reproducer: String?
        if outcome.isFinding {
            reproducer = out + "/repro-" + Self.fiveDigits(i) + ".json"
            try OutputFile.write(rules + "\n", to: reproducer!, option: "--out")
        }
        // Passing runs leave nothing behind; findings keep their directory for a look.
        if !outcome.isFinding { removeWork(runName) }
        return ExploreResult(index: i, point: point, outcome: outcome, record: record, reproducer: reproducer, reproduced: nil)
    }
}
