import AspectConfig
import ArgumentParser
import Foundation
#if canImport(Glibc)
import Glibc
#endif

struct Explore: RunsACommand {
    static let configuration = CommandConfiguration(
        abstract: "Fail every call site of a program in turn and report what it does.",
        discussion: """
        Runs the command once with log-only advice (the baseline: which functions it calls, how often, from where), then once per fault point, each in a private table and a fresh working directory: every call site's first call fails (--strategy sites), every k-th call of each function fails (nth), or sites and then call numbers up to --max-runs (both). Each run is compared with the baseline: absorbed, handled, crash, hang, check-failed (--check exits non-zero), not-reached. Crashes, hangs and failed checks are findings: each gets a rules file that reproduces it and is re-run once. Exit status: 0 no findings, 1 findings, 2 nothing tested (no run planned: the functions named were never called) or --strict and the baseline runs differ, 64 and up as the other commands.

        explore's options go before the command: parsing them stops at -- or at the first word that is not one of them, the command's name, and every word from there on is the command's. An option explore does not have is an error, never the command.

          aspectctl explore --function write --function fsync --check 'test -s out.db' -- ./ledger out.db
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

    @Option(name: .long, help: ArgumentHelp("sites, nth or both.", valueName: "strategy"))
    var strategy: String = "both"

    @Option(name: .long, help: ArgumentHelp("A shell command run in each fresh working directory before the program.", valueName: "cmd"))
    var setup: String?

    @Option(name: .long, help: ArgumentHelp("A shell command run after the program in its directory; non-zero means check-failed. ASPECTS_EXPLORE_FUNCTION, _SITE, _NTH, _ERRNO describe the fault; ASPECTS_EXPLORE_STATUS is the run's exit status (128+N for signal N), ASPECTS_EXPLORE_STDOUT and _STDERR the files holding its output.", valueName: "cmd"))
    var check: String?

    @Option(name: .long, help: ArgumentHelp("How many times the baseline runs, to tell whether runs are independent (at least 2).", valueName: "N"))
    var baselines = 2

    @Flag(name: .long, help: "Stop (exit 2) when the baseline runs differ from each other.")
    var strict = false

    @Flag(name: .long, help: "Keep every run's working directory and output files in OUT/work (by default only findings' stay).")
    var keepWork = false

    @Option(name: .short, help: ArgumentHelp("Runs at a time (default: the number of cores).", valueName: "N"))
    var j: Int?

    @Option(name: .long, help: ArgumentHelp("Seconds before a run is killed as a hang (default: 10 × the baseline, at least 2).", valueName: "seconds"))
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

    @Option(name: .long, help: ArgumentHelp("Which call numbers a spread-out plan takes (the same seed, the same plan).", valueName: "N"))
    var seed: UInt64 = 0

    @Option(name: .long, help: ArgumentHelp("auto (a bar on a terminal's stderr), always (also one line per update on a log), never.", valueName: "when"))
    var progress: String = "auto"

    @Option(name: .long, help: ArgumentHelp("Use this libaspects.so (default: next to aspectctl, or $ASPECTS_PRELOAD).", valueName: "path"))
    var preload: String?

    @Argument(parsing: .captureForPassthrough, help: ArgumentHelp("The command and its arguments (after explore's options, or after --).", valueName: "command"))
    var command: [String] = []

    func validate() throws {
        try validateCommandWords()
        if FaultPoint.Strategy(rawValue: strategy) == nil { throw ValidationError("--strategy is sites, nth or both, not \(strategy)") }
        for kind in faults where FaultKind(rawValue: kind) == nil {
            throw ValidationError("--fault is \(FaultKind.allCases.map(\.rawValue).joined(separator: ", ")), not \(kind)")
        }
        if let j, j < 1 { throw ValidationError("-j takes 1 or more") }
        if maxRuns < 1 { throw ValidationError("--max-runs takes 1 or more") }
        if baselines < 2 { throw ValidationError("--baselines takes 2 or more: one run cannot show that runs differ") }
        if let timeout, !(timeout > 0) { throw ValidationError("--timeout takes a number of seconds above 0") }
        if !["auto", "always", "never"].contains(progress) { throw ValidationError("--progress is auto, always or never, not \(progress)") }
    }

    func run() throws {
        var findings = 0
        var refusal: String?
        try guarded {
            var options = ExploreOptions(command: argv, library: try Run.findLibrary(preload))
            options.functions = functions
            options.families = families
            options.baselines = baselines
            options.aspectctl = Self.ownPath()
            options.imported = imported
            options.errnos = errnos
            options.strategy = FaultPoint.Strategy(rawValue: strategy)!
            options.setup = setup
            options.check = check
            options.jobs = j ?? max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
            options.timeout = timeout
            options.maxRuns = maxRuns
            options.outDirectory = out
            options.seed = seed
            options.keepWork = keepWork
            let campaign = try ExploreCampaign(options: options)
            ExploreInterruption.watch(workDirectory: out + "/work")
            let chosen = try campaign.chosenFunctions()
            var kinds: [FaultKind] = []
            for k in faults.compactMap(FaultKind.init(rawValue:)) where !kinds.contains(k) { kinds.append(k) }
            if kinds.isEmpty { kinds = [.error] }
            if kinds.contains(.short), !chosen.contains(where: { FaultKind.short.applies(to: $0, in: campaign.catalog) }) {
                let able = campaign.catalog.groups.filter { $0.faults.contains(.short) }.map { campaign.catalog.primary(of: $0).name }
                Console.write("aspectctl: warning: --fault short: none of the functions explored transfers a count that could be cut short, so no short transfer is planned; it applies to \(able.joined(separator: ", "))\n")
            }
            let terminal = isatty(2) != 0
            let bar = ProgressBar(enabled: progress == "always" || (progress == "auto" && terminal), terminal: terminal)
            bar.note("baseline: \(argv.joined(separator: " ")) with \(chosen.count) function(s) logged")
            // The family companions are counted, never failed: to say what a function never
            // called could be replaced by.
            let surveyed = chosen + ExploreCoverage.familyCompanions(of: chosen, catalog: campaign.catalog)
            let (baseline, allProfiles) = try campaign.baseline(functions: surveyed)
            let profiles = allProfiles.filter { chosen.contains($0.function) }
            bar.note("baseline: run again \(baselines - 1) time(s) to compare")
            let comparison = try campaign.repeatBaseline(functions: surveyed, first: baseline, profiles: allProfiles)
            if let warning = comparison.warning {
                bar.finish()
                Console.write("aspectctl: warning: \(warning)\n")
                if strict {
                    refusal = "--strict: the baseline runs differ, so the campaign's outcomes could not be trusted; "
                        + "make the command's runs independent (keep its files in the working directory) or leave out --strict"
                    return
                }
            }
            let imports = (try? ExploreCampaign.resolveProgram(argv[0])).flatMap { try? Preflight(binary: $0, catalog: campaign.catalog) }?.objects.first?.imports
            let coverage = ExploreCoverage.make(chosen: chosen, named: functions, profiles: allProfiles, names: campaign.calledNames,
                                                imports: imports, catalog: campaign.catalog)
            let plan = ExplorePlan.make(profiles: profiles, strategy: options.strategy, errnos: campaign.errnos(for:),
                                        kinds: { f in kinds.filter { $0.applies(to: f, in: campaign.catalog) } },
                                        maxRuns: maxRuns, seed: seed)
            bar.start(total: plan.points.count)
            var report = try campaign.execute(plan: plan, baseline: baseline, profiles: profiles) { done, total, found in
                bar.update(done: done, total: total, findings: found)
            }
            bar.finish()
            // What a run's sweep could not tell as its own (a daemon of --setup or --check, or
            // one that cleared its environment) ends with the campaign.
            ProcessTree.killDescendants()
            report.coverage = coverage
            report.baselines = comparison
            print(report.text, terminator: "")
            if let json { try OutputFile.write(report.json.rendered(pretty: true) + "\n", to: json, option: "--json") }
            if let html { try OutputFile.write(report.html, to: html, option: "--html") }
            if let junit { try OutputFile.write(report.junit, to: junit, option: "--junit") }
            findings = report.findings.count
            if plan.points.isEmpty { refusal = Self.emptyPlanReason(coverage, strategy: strategy) }
        }
        if let refusal {
            Console.write("aspectctl: explore: \(refusal)\n")
            throw ExitCode(2)
        }
        if findings > 0 { throw ExitCode(1) }
    }

    /// Why a campaign planned no run: it tested nothing, which is not a pass.
    static func emptyPlanReason(_ coverage: ExploreCoverage, strategy: String) -> String {
        let never = coverage.functions.filter { $0.calls == 0 }.map(\.function)
        let why = never.count == coverage.functions.count
            ? "the program never called \(never.joined(separator: ", ")) in the baseline"
            : "no fault point could be made of the calls (--strategy \(strategy)) of \(coverage.functions.map(\.function).joined(separator: ", "))"
        return "no run was planned: \(why), so nothing was tested; name functions it calls (see the coverage lines above, or `aspectctl calls -- COMMAND`)"
    }

    /// This aspectctl's absolute path, for reproducer scripts: the running executable's.
    static func ownPath() -> String {
        if let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") { return exe }
        return URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL.resolvingSymlinksInPath().path
    }
}

/// A progress line on a terminal's stderr: runs done of planned, findings, elapsed, ETA,
/// redrawn in place. Quiet when stderr is not a terminal (a test's log stays clean), unless
/// asked for (`--progress always`): then one plain line per update, for logs.
final class ProgressBar: @unchecked Sendable {
    let enabled: Bool
    let terminal: Bool
    private let lock = NSLock()
    private var started = Date()
    private var lastDraw = Date.distantPast

    init(enabled: Bool, terminal: Bool) {
        self.enabled = enabled
        self.terminal = terminal
    }

    private func write(_ line: String) {
        Console.write(terminal ? "\r\u{1b}[K" + line : line + "\n")
    }

    func note(_ text: String) {
        guard enabled else { return }
        write(text)
    }

    func start(total: Int) {
        started = Date()
        update(done: 0, total: total, findings: 0)
    }

    func update(done: Int, total: Int, findings: Int) {
        guard enabled else { return }
        lock.withLock {
            let now = Date()
            guard done == 0 || done == total || now.timeIntervalSince(lastDraw) > 0.1 else { return }
            lastDraw = now
            let elapsed = now.timeIntervalSince(started)
            let width = 30, filled = total == 0 ? width : width * done / total
            let eta = done == 0 ? "?" : Self.clock(elapsed / Double(done) * Double(total - done))
            let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
            write("[\(bar)] \(done)/\(total) runs, \(findings) finding(s), \(Self.clock(elapsed)) elapsed, ETA \(eta)")
        }
    }

    func finish() {
        guard enabled, terminal else { return }
        Console.write("\n")
    }

    static func clock(_ t: Double) -> String {
        let s = Int(t.rounded())
        return s >= 3600 ? String(format: "%d:%02d:%02d", s / 3600, s / 60 % 60, s % 60) : String(format: "%d:%02d", s / 60, s % 60)
    }
}
