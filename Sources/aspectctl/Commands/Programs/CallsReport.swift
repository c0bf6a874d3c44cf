import ArgumentParser
import AspectsCore
import AspectsExplore
import AspectsRules
import AspectsTable
import CAspectsABI
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One observed run of a command: what it called, per function and per program.
struct CallsReport {
    struct Function {
        var name: String
        var calls: UInt64
        var family: String?
        /// The names its calls came by, most first (from the events read).
        var calledAs: [(name: String, calls: UInt64)]
        /// Its call sites, most calls first.
        var sites: [(site: CallSite, calls: UInt64)]
        /// Calls no site was read for (the ring overflowed, or the preload itself called).
        var withoutSite: UInt64 { calls - min(calls, sites.reduce(0) { AdviceTableCounts.add($0, $1.calls) }) }
    }

    struct Program {
        var path: String
        var processes: Int
        var functions: [(name: String, calls: UInt64)]
    }

    var command: [String]
    var record: RunRecord
    var processes: UInt64
    var functions: [Function]
    var programs: [Program]
    var locations: [CallSite: String]
    var eventsLost: UInt64
    var notes: [String]

    /// stdio functions that carry a program's output or input: the write(2) and read(2) calls
    /// behind them are libc's own, which no preload reaches. fflush and fclose write out what
    /// is buffered.
    static let stdioOutput = ["fwrite", "fputs"], stdioFlush = ["fflush", "fclose"]
    static let stdioInput = ["fread", "fgets", "getline", "getdelim"]

    /// Runs the command once under a log-only rule on every catalog function (one pass of a
    /// CallSurvey), in a private directory holding its table and its output, removed after.
    static func observe(command: [String], program: String, library: String, timeout: Double,
                        catalog: Catalog = .builtIn) throws(AspectsError) -> CallsReport {
        var template = Array((NSTemporaryDirectory() + "aspects-calls-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw AspectsError(.system, "cannot create a directory in \(NSTemporaryDirectory()): \(String(cString: strerror(errno)))")
        }
        let dir = String(cString: made)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var survey = CallSurvey(functions: catalog.groups.map { catalog.primary(of: $0).name }, preload: library)
        let pending = survey.pending
        let compiled = try RuleCompiler(catalog: catalog).compile(try RuleDecoder(source: "calls").decode(survey.rules(for: pending)))
        let name = try TableName(dir + "/calls.table")
        let table = try AdviceTable.create(name, ruleCapacity: compiled.count, eventCapacity: Int(ASPECTS_MAX_EVENT_CAPACITY),
                                           statCapacity: Int(ASPECTS_MAX_STAT_CAPACITY))
        // destroyed, not only unlinked with the directory: its segment outlives the file
        defer { try? AdviceTable.destroy(name) }
        try table.add(compiled)
        var run = ProgramRun(argv: command, environment: CallSurvey.environment(),
                             programEnvironment: ["LD_PRELOAD": library, "ASPECTS_TABLE": name.name, "ASPECTS_HIERARCHY": table.newHierarchy()],
                             directory: FileManager.default.currentDirectoryPath, timeout: timeout)
        run.readsOutput = false // its output may be any size; only its stderr's end is shown
        let record = try run.run(outputPrefix: dir + "/command")
        survey.record(table, pending: pending)
        let rules = table.rules()
        do { try table.checkCounts(rules) } catch {
            // The table was private to this run: only a process of the command could write it.
            throw AspectsError(.badTable, field: "command", "a process of the command wrote into its advice table (\(error.message)), so its counts cannot be trusted",
                               fix: "observe a command that leaves the table named by ASPECTS_TABLE alone")
        }
        let attached = table.attachments()

        var functions: [Function] = []
        for f in survey.functions {
            let calls = survey.totals[f, default: 0]
            guard calls > 0, let function = catalog.function(named: f) else { continue }
            functions.append(Function(name: f, calls: calls, family: catalog.family(of: function),
                                      calledAs: mostFirst(survey.names[f] ?? [:]), sites: mostFirst(survey.sites[f] ?? [:])))
        }
        functions.sort { ($0.calls, $1.name) > ($1.calls, $0.name) }

        // Per program: each rule's counts by process image, summed per program as `stats` does.
        var perProgram: [String: [String: UInt64]] = [:]
        var processesOf: [String: Set<String>] = [:]
        var order: [String] = []
        for (i, f) in pending.enumerated() {
            guard let r = rules.first(where: { $0.id == CallSurvey.ruleID(i) }) else { continue }
            for p in r.byProcess where p.matched > 0 {
                let program = Stats.attachment(of: p.pid, image: p.image, attached)?.program ?? "pid \(p.pid) (no attachment record)"
                if perProgram[program] == nil { order.append(program) }
                perProgram[program, default: [:]][f] = AdviceTableCounts.add(perProgram[program]?[f] ?? 0, p.matched)
                processesOf[program, default: []].insert("\(p.pid)/\(p.image)")
            }
        }
        let programs = order.map { Program(path: $0, processes: processesOf[$0]?.count ?? 0, functions: mostFirst(perProgram[$0] ?? [:])) }

        let allSites = Set(functions.flatMap { $0.sites.map(\.site) })
        let objects = [program] + Set(attached.map(\.program).filter { $0.hasPrefix("/") }).subtracting([program]).sorted()
        let locations = allSites.isEmpty ? [:] : SiteSymbolizer.forPrograms(objects).locations(of: allSites)
        var report = CallsReport(command: command, record: record, processes: table.attachCount, functions: functions,
                                 programs: programs, locations: locations, eventsLost: survey.eventsLost, notes: [])
        report.notes = report.findNotes(attached: attached, static: Run.staticWarning(command[0]))
        return report
    }

    static func mostFirst<K>(_ counts: [K: UInt64]) -> [(K, UInt64)] where K: Comparable {
        counts.map { ($0.key, $0.value) }.sorted { ($0.1, $1.0) > ($1.1, $0.0) }
    }

    func calls(of name: String) -> UInt64 { functions.first { $0.name == name }?.calls ?? 0 }

    /// What the list alone does not say: nothing seen and why, stdio's hidden calls, sites
    /// the ring lost, a command that failed or was killed.
    func findNotes(attached: [Attachment], static staticWarning: String?) -> [String] {
        var notes: [String] = []
        if processes == 0 {
            notes.append("no process attached the table, so no call was seen: " + (staticWarning
                ?? "the command may have dropped LD_PRELOAD, or run nothing dynamically linked"))
        } else if functions.isEmpty {
            notes.append("\(processes) process(es) attached, but none called a catalog function through the dynamic linker (calls libc makes to itself are not seen)")
        }
        func used(_ names: [String]) -> [String] { names.filter { calls(of: $0) > 0 }.map { "\($0) ×\(calls(of: $0))" } }
        let out = used(Self.stdioOutput)
        if !out.isEmpty {
            let flush = Self.stdioFlush.filter { calls(of: $0) > 0 }
            notes.append("output goes through stdio (\(out.joined(separator: ", "))): the write(2) calls that carry it happen inside libc, where no preload reaches, so a rule on write never sees them; rule on "
                         + (Self.stdioOutput.filter { calls(of: $0) > 0 } + flush).joined(separator: ", ")
                         + " instead" + (flush.isEmpty ? "" : " (fflush and fclose write out what is buffered)"))
        }
        let input = used(Self.stdioInput)
        if !input.isEmpty {
            notes.append("input comes through stdio (\(input.joined(separator: ", "))): the read(2) calls behind it happen inside libc, where no preload reaches; rule on "
                         + Self.stdioInput.filter { calls(of: $0) > 0 }.joined(separator: ", ") + " instead")
        }
        if eventsLost > 0 {
            notes.append("call sites are those of the last \(ASPECTS_MAX_EVENT_CAPACITY) calls (the event ring's size); \(eventsLost) earlier calls are counted without a site")
        }
        if record.timedOut {
            notes.append("the command did not end within --timeout and was killed with its process group: the calls are those until then")
        } else if let s = record.signal {
            notes.append("the command was killed by signal \(s)")
        } else if let status = record.exitStatus, status != 0 {
            let tail = record.stderr.split(separator: "\n").suffix(3).joined(separator: " | ")
            notes.append("the command exited with status \(status)" + (tail.isEmpty ? "" : "; its stderr ended: \(tail)"))
        }
        return notes
    }

    var outcome: String {
        if record.timedOut { return "killed at --timeout" }
        if let s = record.signal { return "killed by signal \(s)" }
        return "exit status \(record.exitStatus ?? 0)"
    }

    func siteText(_ s: (site: CallSite, calls: UInt64)) -> String {
        SiteSymbolizer.describe(s.site, at: locations[s.site]) + " ×\(s.calls)"
    }

    /// The readable report: a header, the table, each program's calls, the notes.
    func text(top: Int?, sites shown: Int) -> String {
        let programsText = Set(programs.map(\.path)).sorted().map { ($0 as NSString).lastPathComponent }.joined(separator: ", ")
        var out = "\(command.map(ExploreReport.shellQuoted).joined(separator: " ")): \(outcome); \(processes) process(es) attached" + (programsText.isEmpty ? "" : " (\(programsText))") + "\n"
        if !functions.isEmpty {
            let listed = top.map { Array(functions.prefix($0)) } ?? functions
            let rows = [["function", "calls", "family", "top call sites"]] + listed.map { f -> [String] in
                let others = f.calledAs.filter { $0.name != f.name }
                let name = f.name + (others.isEmpty ? "" : " (as \(others.map(\.name).joined(separator: ", ")))")
                var where_ = f.sites.prefix(shown).map(siteText)
                if f.sites.count > shown { where_.append("\(f.sites.count - shown) more") }
                return [name, String(f.calls), f.family ?? "-", where_.joined(separator: ", ")]
            }
            let widths = (0..<3).map { c in rows.map { $0[c].count }.max()! }
            out += "\n"
            for row in rows {
                let cells = row.enumerated().map { c, cell -> String in
                    if c == 3 { return cell }
                    let pad = String(repeating: " ", count: widths[c] - cell.count)
                    return c == 1 ? pad + cell : cell + pad
                }
                out += cells.joined(separator: "  ").trimmingTrailingSpaces() + "\n"
            }
            if listed.count < functions.count { out += "(\(functions.count - listed.count) more; --all lists every one)\n" }
        }
        if programs.count > 1 {
            out += "\nby program:\n"
            for p in programs {
                let listed = top.map { Array(p.functions.prefix($0)) } ?? p.functions
                out += "  \(p.path) (\(p.processes) process\(p.processes == 1 ? "" : "es")): "
                    + listed.map { "\($0.name) \($0.calls)" }.joined(separator: ", ")
                    + (listed.count < p.functions.count ? ", \(p.functions.count - listed.count) more" : "") + "\n"
            }
        }
        if !notes.isEmpty {
            out += "\n" + notes.map { "note: " + $0 + "\n" }.joined()
        }
        return out
    }

    /// config/calls.schema.json
    var json: JSONNode.Value {
        JSONOut.object([
            ("command", JSONOut.array(command.map { .string($0) })),
            ("exitStatus", record.exitStatus.map { JSONOut.int($0) }),
            ("signal", record.signal.map { JSONOut.int($0) }),
            ("timedOut", .bool(record.timedOut)),
            ("processes", JSONOut.int(processes)),
            ("functions", JSONOut.array(functions.map { f in
                JSONOut.object([("function", .string(f.name)), ("calls", JSONOut.int(f.calls)),
                                ("family", f.family.map { .string($0) }),
                                ("calledAs", JSONOut.array(f.calledAs.map { JSONOut.object([("name", .string($0.name)), ("calls", JSONOut.int($0.calls))]) })),
                                ("sites", JSONOut.array(f.sites.map { s in
                                    JSONOut.object([("site", .string(s.site.description)), ("calls", JSONOut.int(s.calls)),
                                                    ("location", locations[s.site].map { .string($0) })])
                                })),
                                ("callsWithoutSite", JSONOut.int(f.withoutSite))])
            })),
            ("programs", JSONOut.array(programs.map { p in
                JSONOut.object([("program", .string(p.path)), ("processes", JSONOut.int(p.processes)),
                                ("functions", JSONOut.array(p.functions.map { JSONOut.object([("function", .string($0.name)), ("calls", JSONOut.int($0.calls))]) }))])
            })),
            ("eventsLost", JSONOut.int(eventsLost)),
            ("notes", JSONOut.array(notes.map { .string($0) })),
        ])
    }
}
