import Foundation

/// The ways a campaign is shown: a table for the terminal, JSON for tools (config/
/// explore.schema.json), one self-contained HTML page with the function × site matrix.
extension ExploreReport {
    /// The shell line that reproduces a finding: in a fresh directory prepared by --setup,
    /// `aspectctl run` with the finding's rules file.
    public func reproduceCommand(_ r: ExploreResult) -> String? {
        guard let file = r.reproducer else { return nil }
        let run = "aspectctl run --rules \(Self.shellQuoted(file)) -- " + command.map(Self.shellQuoted).joined(separator: " ")
        guard let setup else { return run }
        return "cd \"$(mktemp -d)\" && sh -c \(Self.shellQuoted(setup)) && " + run
    }

    static func shellQuoted(_ s: String) -> String {
        let plain = s.unicodeScalars.allSatisfy { $0.properties.isAlphabetic || "0123456789-_./=:+,@%".unicodeScalars.contains($0) }
        return plain && !s.isEmpty ? s : "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// A site with its source location when known: `ledger+0x1a2b (ledger.c:57 (ledger_write))`.
    public func describe(_ site: CallSite) -> String {
        locations[site].map { "\(site) (\($0))" } ?? site.description
    }

    /// A fault point as the report says it, its site with the source location.
    public func describe(_ point: FaultPoint) -> String {
        guard let site = point.site else { return point.description }
        return "\(point.function) from \(describe(site)), call \(point.nth) fails with \(point.errno)"
    }

    /// Counts per outcome, in report order.
    public var outcomeCounts: [(ExploreOutcome, Int)] {
        ExploreOutcome.allCases.sorted().map { o in (o, results.filter { $0.outcome == o }.count) }
    }

    static func what(_ r: ExploreResult) -> String {
        switch r.outcome {
        case .crash: return "signal \(r.record.signal ?? 0)" + (r.record.stderr.isEmpty ? "" : ": " + firstLine(r.record.stderr))
        case .hang: return "still running after the timeout"
        case .handled: return "exit \(r.record.exitStatus ?? 0)" + (r.record.stderr.isEmpty ? "" : ": " + firstLine(r.record.stderr))
        case .checkFailed: return "exit \(r.record.exitStatus ?? 0); the check failed"
        case .absorbed: return "same status and output"
        case .notReached: return "the fault never fired"
        }
    }

    static func firstLine(_ s: String) -> String {
        let line = s.split(separator: "\n").first.map(String.init) ?? ""
        return line.count > 100 ? String(line.prefix(100)) + "…" : line
    }

    /// The terminal report: a summary, then the findings (with reproducers), then the other
    /// outcomes grouped by function and site.
    public var text: String {
        var s = "explore: \(command.joined(separator: " "))\n"
        s += "baseline: exit \(baseline.exitStatus ?? 0) in \(Self.seconds(baseline.seconds)); "
        s += profiles.filter { $0.calls > 0 }.map { "\($0.function) \($0.calls) call(s) from \($0.sites.count) site(s)" }.joined(separator: ", ") + "\n"
        s += "plan: \(results.count) run(s) of \(plan.candidates) fault point(s)"
        if plan.sitesSampled { s += " (more sites than --max-runs: sites taken round-robin over the functions)" }
        if plan.spread { s += " (call numbers spread evenly to fit --max-runs)" }
        s += "; timeout \(Self.seconds(timeout)); \(Self.seconds(seconds)) in all\n"
        s += "outcomes: " + outcomeCounts.filter { $0.1 > 0 }.map { "\($0.0.rawValue) \($0.1)" }.joined(separator: ", ") + "\n"
        let found = findings.sorted { ($0.outcome, $0.index) < ($1.outcome, $1.index) }
        if found.isEmpty {
            s += "\nno findings\n"
        } else {
            s += "\nfindings:\n"
            for r in found {
                let repro = r.reproduced.map { $0 ? "reproduced" : "flaky" } ?? ""
                s += "  \(r.outcome.rawValue.uppercased()) \(describe(r.point)): \(Self.what(r)) [\(repro)]\n"
                if let cmd = reproduceCommand(r) { s += "    \(cmd)\n" }
            }
        }
        let others = results.filter { !$0.outcome.isFinding }
        if !others.isEmpty {
            s += "\nother runs:\n"
            let rows = Dictionary(grouping: others) { "\($0.point.function)\t\($0.point.site.map { "from " + describe($0) } ?? "any site")\t\($0.outcome.rawValue)" }
            for key in rows.keys.sorted() {
                let parts = key.split(separator: "\t").map(String.init)
                let runs = rows[key]!
                let calls = runs.map(\.point.nth)
                let range = calls.count == 1 ? "call \(calls[0])" : "calls \(calls.min()!)–\(calls.max()!) (\(calls.count) runs)"
                s += "  \(parts[0]) \(parts[1]) \(range): \(parts[2])\n"
            }
        }
        return s
    }

    static func seconds(_ t: Double) -> String { t < 10 ? String(format: "%.2f s", t) : String(format: "%.0f s", t) }

    /// The whole campaign as JSON (config/explore.schema.json).
    public var json: JSONNode.Value {
        func record(_ r: RunRecord) -> JSONNode.Value {
            JSONOut.object([
                ("exitStatus", r.exitStatus.map { JSONOut.int($0) }), ("signal", r.signal.map { JSONOut.int($0) }),
                ("timedOut", .bool(r.timedOut)), ("seconds", .number(String(format: "%.3f", r.seconds))),
                ("stdoutBytes", JSONOut.int(r.stdout.utf8.count)), ("stderrTail", .string(String(r.stderr.suffix(2000)))),
            ])
        }
        return JSONOut.object([
            ("version", JSONOut.int(1)),
            ("command", JSONOut.array(command.map { .string($0) })),
            ("seed", JSONOut.int(seed)),
            ("timeoutSeconds", .number(String(format: "%.3f", timeout))),
            ("seconds", .number(String(format: "%.3f", seconds))),
            ("baseline", record(baseline)),
            ("functions", JSONOut.array(profiles.map { p in
                JSONOut.object([("function", .string(p.function)), ("calls", JSONOut.int(p.calls)),
                                ("sites", JSONOut.array(p.sites.sorted { $0.key < $1.key }.map { site, n in
                                    JSONOut.object([("site", .string(site.description)), ("calls", JSONOut.int(n)),
                                                    ("location", locations[site].map { .string($0) })]) }))])
            })),
            ("plan", JSONOut.object([("runs", JSONOut.int(results.count)), ("candidates", JSONOut.int(plan.candidates)),
                                     ("spread", .bool(plan.spread)), ("sitesSampled", .bool(plan.sitesSampled))])),
            ("outcomes", JSONOut.object(outcomeCounts.map { ($0.0.rawValue, JSONOut.int($0.1)) })),
            ("runs", JSONOut.array(results.map { r in
                JSONOut.object([
                    ("index", JSONOut.int(r.index)), ("function", .string(r.point.function)),
                    ("site", r.point.site.map { .string($0.description) }),
                    ("location", r.point.site.flatMap { locations[$0] }.map { .string($0) }), ("nth", JSONOut.int(r.point.nth)),
                    ("errno", .string(r.point.errno)), ("outcome", .string(r.outcome.rawValue)),
                    ("finding", .bool(r.outcome.isFinding)), ("run", record(r.record)),
                    ("reproducer", r.reproducer.map { .string($0) }),
                    ("reproduce", reproduceCommand(r).map { .string($0) }),
                    ("reproduced", r.reproduced.map { .bool($0) }),
                ])
            })),
        ])
    }
}
