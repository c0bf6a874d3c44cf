import ArgumentParser
import AspectsCore
import AspectsExplore
import AspectsRules
import CAspectsABI
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `aspectctl explore [campaign]`: the campaign itself, explore's default subcommand.
struct ExploreCampaignCommand: RunsACommand {
    static let invocation = Explore.name

    static let configuration = CommandConfiguration(
        commandName: "campaign",
        abstract: "Fail every call site of a program in turn and report what it does (the default of explore).",
        discussion: """
        Runs the command once with log-only advice (the baseline: which functions it calls, how often, from where), then once per fault point, each in a private table and a fresh working directory: every call site's first call fails (--strategy sites), every k-th call of each function fails (nth), sites and then call numbers up to --max-runs (both), or the first call through each calling context, the site and the callers above it (context, --context-depth). A fault point fails one call of one program image: call k is the image's k-th call of the function counted over the whole process tree, so exactly one process's call fails; --process limits the campaign to some images. Points have stable names (git:write@git+0x1a2b#3/error/EIO) and the plan an id, a hash of everything that defines it. Each run is compared with the baseline: absorbed, handled, crash, hang (still running at the limit and at 3 times it), check-failed (--check exits non-zero), silent-difference (no --check: the baseline's status and stderr, but other files left or stdout lines lost), fail-fast (after a failed allocation it said memory ran out and stopped: by design), not-reached. Crashes, hangs, failed checks and silent differences are findings, grouped into bugs by cause (where a crash happened, a symptom): each gets a rules file that reproduces it, and each bug is re-run once. A baseline exiting non-zero the same way every time is the normal status (--expect-status N to say it). Exit status: 0 no findings, 1 findings, 2 nothing tested (no run planned: the functions named were never called) or --strict and the baseline runs differ, 64 and up as the other commands.

        explore's options go before the command: parsing them stops at -- or at the first word that is not one of them, the command's name, and every word from there on is the command's. An option explore does not have is an error, never the command.

          aspectctl explore --function write --function fsync --check 'test -s out.db' -- ./ledger out.db

        A campaign splits over machines with --shard I/N (each writes its --json), and `aspectctl explore merge` makes the whole campaign's report from the shards' (docs/ci.md). Each finished run is journaled in --out: after an interruption, the same command with --resume runs only what is missing.
        """)

    @Option(name: .customLong("function"), help: ArgumentHelp("A catalog function to fail; repeatable.", valueName: "name"))
    var functions: [String] = []

    @Option(name: .customLong("family"), help: ArgumentHelp("A catalog family to fail, every member (write: write, pwrite, writev ...); repeatable.", valueName: "name"))
    var families: [String] = []

    @Flag(name: .long, help: "Every catalog function the program and its libraries import (the default without --function or --family).")
    var imported = false

    @Option(name: .customLong("errno"), help: ArgumentHelp("An error to inject where the function can report it; repeatable (default: each function's own).", valueName: "E"))
    var errnos: [String] = []

    @Option(name: .customLong("fault"), help: ArgumentHelp("How a fault point fails its call; repeatable: error (once, with the errno, where the catalog says the function's real failure happens: after close ran, instead of a write), short (a partial transfer the caller must continue; functions whose catalog entry allows it), persistent (that call and every later one fail, as a full disk stays full). Default: error.", valueName: "kind"))
    var faults: [String] = []

    @Option(name: .customLong("process"), help: ArgumentHelp("Only the program images whose executable path matches this glob, as a rule's \"process\" condition matches (a pattern without / matches the file name: --process git, --process '*/git'); repeatable. The others' calls are neither planned nor failed, and the report says which were left out.", valueName: "glob"))
    var processes: [String] = []

    @Option(name: .long, help: ArgumentHelp("sites, nth, both (sites, then call numbers), or context (the first call through each calling context: the site and --context-depth - 1 callers above it, so that callers of one wrapper such as xmalloc are told apart).", valueName: "strategy"))
    var strategy: String = "both"

    @Option(name: .customLong("context-depth"), help: ArgumentHelp("With --strategy context: return addresses in a context, the call site first (1 to \(ASPECTS_MAX_CONTEXT_DEPTH)).", valueName: "N"))
    var contextDepth = 3

    @Option(name: .long, help: ArgumentHelp("A shell command run in each fresh working directory before the program.", valueName: "cmd"))
    var setup: String?

    @Option(name: .long, help: ArgumentHelp("A shell command run after the program in its directory; non-zero means check-failed. ASPECTS_EXPLORE_IMAGE, _FUNCTION, _SITE, _NTH, _ERRNO describe the fault; ASPECTS_EXPLORE_STATUS is the run's exit status (128+N for signal N), ASPECTS_EXPLORE_STDOUT and _STDERR the files holding its output.", valueName: "cmd"))
    var check: String?

    @Option(name: .long, help: ArgumentHelp("How many times the baseline runs, to tell whether runs are independent (at least 2).", valueName: "N"))
    var baselines = 2

    @Option(name: .customLong("expect-status"), help: ArgumentHelp("The exit status of the command when nothing fails; a baseline that exits otherwise is refused (default: whatever the baseline exits with, when it does so every time: diff exits 1 when the files differ).", valueName: "N"))
    var expectStatus: Int32?

    @Flag(name: .long, help: "Stop (exit 2) when the baseline runs differ from each other.")
    var strict = false

    @Flag(name: .long, help: "Keep every run's working directory and output files in OUT/work (by default only findings' stay).")
    var keepWork = false

    @Flag(name: .long, help: "Count a program that stops on purpose for want of memory (after a failed allocation it says so — \"out of memory\", \"memory exhausted\" — and aborts or exits) as a bug: such an abort is a crash. By default it is outcome fail-fast, shown once per program, not a finding.")
    var failFastIsBug = false

    @Option(name: .short, help: ArgumentHelp("Runs at a time (default: the number of cores).", valueName: "N"))
    var j: Int?

    @Option(name: .long, help: ArgumentHelp("Seconds before a run is killed (default 2), raised to 10 × the baseline's time; a run killed so is run again with 3 × the limit and is a hang only if it is still running then.", valueName: "seconds"))
    var timeout: Double?

    @Option(name: .customLong("max-runs"), help: ArgumentHelp("The most runs of the campaign.", valueName: "N"))
    var maxRuns = 2000

    @Option(name: .long, help: ArgumentHelp("Where reproducers and the runs of findings go.", valueName: "dir"))
    var out = "aspects-explore"

    @Option(name: .long, help: ArgumentHelp("Also write the campaign as JSON.", valueName: "file"))
    var json: String?

    @Option(name: .long, help: ArgumentHelp("Also write the campaign as one self-contained HTML page: the function × call-site matrix, each cell opening its runs.", valueName: "file"))
    var html: String?

    @Option(name: .long, help: ArgumentHelp("Also write the campaign as JUnit XML for CI: a test case per fault point, a failure per finding (its bug, stderr, reproducer), a fault that never fired skipped.", valueName: "file"))
    var junit: String?

    @Option(name: .long, help: ArgumentHelp("Run only the I-th of N parts of the plan (1 ≤ I ≤ N): point k of the plan goes to shard k mod N + 1. Merge the shards' --json reports with `explore merge`.", valueName: "I/N"))
    var shard: String?

    @Flag(name: .long, help: "Finish the campaign interrupted in --out: run the baseline again, check the plan is the journal's, run only the points the journal lacks.")
    var resume = false

    @Flag(name: .long, help: "Clear what a previous campaign wrote in --out (its journal, reproducers and work directory; nothing else) before starting.")
    var force = false

    @Option(name: .long, help: ArgumentHelp("Which calls a plan cut to --max-runs takes beyond each function's first (the same seed, the same plan).", valueName: "N"))
    var seed: UInt64 = 0

    @Option(name: .long, help: ArgumentHelp("auto (a bar on a terminal's stderr), always (also one line per update on a log), never.", valueName: "when"))
    var progress: String = "auto"

    @Option(name: .long, help: ArgumentHelp("Use this libaspects.so (default: next to aspectctl, or $ASPECTS_PRELOAD).", valueName: "path"))
    var preload: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Explore a test suite instead of one command: a file with one test command per line, split into words as a POSIX shell splits them (quotes and backslashes honoured) and run without a shell (write sh -c '...' for pipes or variables); # starts a comment, blank lines are skipped. Each test is its own campaign — its own baseline (a test that fails without faults is reported and skipped), plan, bugs and directory OUT/tests/NNN-name — and the report groups the bugs across the tests.",
            valueName: "file"))
    var tests: String?

    @Option(
        name: .customLong("tests-from"),
        help: ArgumentHelp(
            "Explore the test suite a shell command prints (as --tests reads a file). A pytest collection (pytest --collect-only -q) is recognised: each test id it prints runs as pytest -q ID.",
            valueName: "cmd"))
    var testsFrom: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Explore the tests of a CMake build directory, as `ctest --show-only=json-v1` lists them there: each test's command, run where ctest runs it (its WORKING_DIRECTORY, by default the build directory; the runs share it, so they run one at a time and what they leave there is not compared: judge it with --check).",
            valueName: "dir"))
    var ctest: String?

    @Argument(parsing: .captureForPassthrough, help: ArgumentHelp("The command and its arguments (after explore's options, or after --).", valueName: "command"))
    var command: [String] = []

    /// The suite options given: --tests, --tests-from, --ctest.
    var suiteSources: [(String, String)] {
        [("--tests", tests), ("--tests-from", testsFrom), ("--ctest", ctest)].compactMap { o, v in v.map { (o, $0) } }
    }

    func validate() throws {
        if suiteSources.isEmpty {
            try validateCommandWords()
        } else {
            if suiteSources.count > 1 {
                throw ValidationError("\(suiteSources.map(\.0).joined(separator: " and ")): give one list of tests")
            }
            if !argv.isEmpty {
                throw ValidationError(
                    "\(suiteSources[0].0) explores the suite's tests: give it or a command, not both (the command: \(argv.joined(separator: " ")))"
                )
            }
        }
        if FaultPoint.Strategy(rawValue: strategy) == nil { throw ValidationError("--strategy is sites, nth, both or context, not \(strategy)") }
        if contextDepth < 1 || contextDepth > Int(ASPECTS_MAX_CONTEXT_DEPTH) {
            throw ValidationError("--context-depth takes 1 to \(ASPECTS_MAX_CONTEXT_DEPTH) (the call site, then its callers), not \(contextDepth)")
        }
        for kind in faults where FaultKind(rawValue: kind) == nil {
            throw ValidationError("--fault is \(FaultKind.allCases.map(\.rawValue).joined(separator: ", ")), not \(kind)")
        }
        if let j, j < 1 { throw ValidationError("-j takes 1 or more") }
        if maxRuns < 1 { throw ValidationError("--max-runs takes 1 or more") }
        if baselines < 2 { throw ValidationError("--baselines takes 2 or more: one run cannot show that runs differ") }
        if let expectStatus, !(0...255).contains(expectStatus) { throw ValidationError("--expect-status takes an exit status, 0 to 255, not \(expectStatus)") }
        if let timeout, !(timeout > 0) { throw ValidationError("--timeout takes a number of seconds above 0") }
        if let shard {
            do { _ = try ExploreShard(parsing: shard) } catch { throw ValidationError(error.description) }
        }
        if resume && force { throw ValidationError("--resume and --force: --resume finishes the campaign in --out, --force clears it; give one") }
        if !["auto", "always", "never"].contains(progress) { throw ValidationError("--progress is auto, always or never, not \(progress)") }
    }

    func run() throws {
        if !suiteSources.isEmpty { return try runSuite() }
        var findings = 0
        var refusal: String?
        // Interrupted, the campaign ends by the watcher's exit (128+N), never by an error or
        // report of a run the interruption killed.
        defer { if ExploreInterruption.isEnding { ExploreInterruption.awaitEnd() } }
        try guardedUnlessInterrupted {
            // the reports' paths, before a campaign of minutes finds them unusable at its end
            try ExploreReportFiles.check(json: json, html: html, junit: junit)
            // before the campaign makes anything in it (issue 30: work/ was made through a
            // link someone else planted, before the link was refused)
            try OutputFile.checkDirectory(out, option: "--out")
            let options = try exploreOptions(command: argv, out: out)
            let shard = try self.shard.map { s throws(AspectsError) in try ExploreShard(parsing: s) }
            let journaled = try CampaignJournal.prepare(out, resume: resume, force: force)
            if resume && journaled == nil {
                Console.write("aspectctl: explore: --resume: \(out) holds no journal (the campaign was interrupted before its plan, or never ran there): it starts from the beginning\n")
            }
            ExploreInterruption.watch(workDirectory: out + "/work")
            let bar = progressBar()
            let (planned, refused) = try ExploreCampaign.plan(options, strict: strict, notes: bar.campaignNotes)
            guard let planned else {
                refusal = refused
                return
            }
            let (journal, done) = try planned.openJournal(shard: shard, shardText: self.shard, journaled: journaled) {
                Console.write("aspectctl: warning: \($0)\n")
            }
            bar.start(total: shard?.indices(of: planned.plan.points.count).count ?? planned.plan.points.count)
            let report = try planned.run(shard: shard, journal: journal, done: done) { done, total, found in
                bar.update(done: done, total: total, findings: found)
            }
            bar.finish()
            print(report.text, terminator: "")
            try ExploreReportFiles.write(report, json: json, html: html, junit: junit)
            findings = report.findings.count
            if planned.plan.points.isEmpty { refusal = planned.emptyPlanReason }
        }
        if let refusal {
            Console.write("aspectctl: explore: \(refusal)\n")
            throw ExitCode(2)
        }
        if findings > 0 { throw ExitCode(1) }
    }

    /// `guarded`, except that an error of a campaign being ended by a signal is not said: the
    /// watcher exits 128+N, and nothing else may be reported meanwhile.
    func guardedUnlessInterrupted(_ body: () throws -> Void) throws {
        try guarded {
            do { try body() } catch {
                if ExploreInterruption.isEnding { ExploreInterruption.awaitEnd() }
                throw error
            }
        }
    }

    /// The options of a campaign of `command` (a test's, in a suite) writing to `out`.
    func exploreOptions(command: [String], out: String) throws(AspectsError) -> ExploreOptions {
        var options = ExploreOptions(command: command, library: try Run.findLibrary(preload))
        options.functions = functions
        options.families = families
        options.baselines = baselines
        options.aspectctl = Self.ownPath()
        options.imported = imported
        options.errnos = errnos
        options.strategy = FaultPoint.Strategy(rawValue: strategy)!
        options.faults = ExploreCampaign.faultKinds(faults)
        options.processes = processes
        options.contextDepth = contextDepth
        options.setup = setup
        options.check = check
        options.jobs = j ?? max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        options.timeout = timeout
        options.maxRuns = maxRuns
        options.outDirectory = out
        options.seed = seed
        options.keepWork = keepWork
        options.failFastIsBug = failFastIsBug
        options.expectStatus = expectStatus
        return options
    }

    /// The progress bar --progress asks for, on stderr.
    func progressBar() -> ProgressBar {
        let terminal = isatty(2) != 0
        return ProgressBar(enabled: progress == "always" || (progress == "auto" && terminal), terminal: terminal)
    }

    /// This aspectctl's absolute path, for reproducer scripts: the running executable's.
    static func ownPath() -> String {
        if let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") { return exe }
        return URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL.resolvingSymlinksInPath().path
    }
}
