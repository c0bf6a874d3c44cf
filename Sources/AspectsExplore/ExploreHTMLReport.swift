import Foundation
import AspectsRules

/// `explore --html`: one self-contained page (no network, no external file) that leads with
/// the bugs (each with its stack and fault points), then the
/// function × call-site matrix coloured by the most severe outcome of each cell; a cell opens
/// its runs — the fault, the outcome, the stderr tail and, for findings, the reproducer.
/// Cells are links to their detail section, which CSS `:target` shows even without script;
/// the script keeps one section open, filters outcomes from the legend, and marks the page
/// `data-ready` once it ran (the browser test reads that).
extension ExploreReport {
    /// The matrix's rows: the runs without a site (call numbers counted over all sites), then
    /// every site seen, sorted by object and offset.
    struct MatrixRow {
        var site: CallSite?
        var id: String
    }

    package var html: String {
        let functions = Array(Set(results.map(\.point.function))).sorted()
        let sites = Set(results.compactMap { Self.row(of: $0.point) }).union(profiles.flatMap { $0.sites.keys })
        var rows: [MatrixRow] = []
        if results.contains(where: { Self.row(of: $0.point) == nil }) { rows.append(MatrixRow(site: nil, id: "any")) }
        for (k, s) in sites.sorted().enumerated() { rows.append(MatrixRow(site: s, id: "s\(k)")) }
        var cells: [String: [ExploreResult]] = [:]
        for r in results { cells[Self.cellKey(r.point.function, Self.row(of: r.point)), default: []].append(r) }
        let calls: [String: [CallSite: UInt64]] = Dictionary(uniqueKeysWithValues: profiles.map { ($0.function, $0.sites) })

        var page = """
        <h1>aspectctl explore</h1>
        <p class="command"><code>\(Self.h(command.map(Self.shellQuoted).joined(separator: " ")))</code></p>
        <p class="summary">\(Self.h(summaryLine))</p>

        """
        page = Self.pageHead(title: "aspects explore: " + command.joined(separator: " "), scripts: true) + page
        let column = Dictionary(uniqueKeysWithValues: functions.enumerated().map { ($1, $0) })
        let rowID = Dictionary(uniqueKeysWithValues: rows.map { ($0.site?.description ?? "", $0.id) })
        func cellID(_ r: ExploreResult) -> String { "cell-\(rowID[Self.row(of: r.point)?.description ?? ""] ?? "any")-\(column[r.point.function] ?? 0)" }
        page += bugsSection(cellID: cellID)
        let stops = failFastStops
        if !stops.isEmpty {
            page += "<section class=\"fail-fast-stops\"><p class=\"label\">fail-fast: stopped for want of memory by design, not bugs</p>\n<ul>\n"
            for f in stops { page += "<li><span class=\"badge fail-fast\">fail-fast</span> \(Self.h(f.program)): \(Self.h(f.message)), \(f.runs.count) run(s)</li>\n" }
            page += "</ul></section>\n"
        }
        page += "<ul class=\"legend\" id=\"legend\">\n"
        for (o, n) in outcomeCounts {
            page += "<li><label><input type=\"checkbox\" checked data-outcome=\"\(o.rawValue)\"> <span class=\"swatch \(o.rawValue)\"></span> \(o.rawValue) <span class=\"count\">\(n)</span></label></li>\n"
        }
        page += "</ul>\n"
        // The findings, each a link to its cell.
        if findings.isEmpty {
            page += "<p class=\"findings\">No findings.</p>\n"
        } else {
            page += "<p class=\"findings\">\(findings.count) finding(s):</p>\n<ul class=\"findings\">\n"
            for r in findings.sorted(by: { ($0.outcome, $0.index) < ($1.outcome, $1.index) }) {
                let id = cellID(r)
                let again = r.reproduced.map { $0 ? " (reproduced)" : " (flaky)" } ?? ""
                page += "<li><span class=\"badge \(r.outcome.rawValue)\">\(r.outcome.rawValue)</span> <a href=\"#\(id)\">\(Self.h(describe(r.point)))</a>: \(Self.h(Self.what(r, baseline: baseline)))\(again)</li>\n"
            }
            page += "</ul>\n"
        }

        // The matrix
        page += "<table id=\"matrix\">\n<thead><tr><th scope=\"col\">call site</th><th scope=\"col\">source</th>"
        for f in functions { page += "<th scope=\"col\" class=\"fn\">\(Self.h(f))</th>" }
        page += "</tr></thead>\n<tbody>\n"
        var details = ""
        for row in rows {
            page += "<tr id=\"row-\(row.id)\"><th scope=\"row\">\(row.site.map { Self.h($0.description) } ?? "any site (k-th call)")</th>"
            page += "<td class=\"src\">\(row.site.flatMap { locations[$0] }.map(Self.h) ?? "")</td>"
            for (c, f) in functions.enumerated() {
                guard let runs = cells[Self.cellKey(f, row.site)], let worst = runs.map(\.outcome).min() else {
                    let seen = row.site.flatMap { calls[f]?[$0] }
                    page += seen.map { "<td class=\"empty\" title=\"\($0) call(s), no fault planned here\"></td>" } ?? "<td class=\"empty\"></td>"
                    continue
                }
                let id = "cell-\(row.id)-\(c)"
                let counts = ExploreOutcome.allCases.sorted().compactMap { o -> String? in
                    let n = runs.filter { $0.outcome == o }.count
                    return n > 0 ? "\(n) \(o.rawValue)" : nil
                }
                let outcomes = Set(runs.map(\.outcome.rawValue)).sorted().joined(separator: " ")
                page += "<td class=\"cell \(worst.rawValue)\" data-function=\"\(Self.h(f))\" data-site=\"\(Self.h(row.site?.description ?? ""))\" data-outcomes=\"\(outcomes)\"><a href=\"#\(id)\" title=\"\(Self.h(f)): \(counts.joined(separator: ", "))\">\(runs.count)</a></td>"
                details += detail(id: id, function: f, site: row.site, runs: runs)
            }
            page += "</tr>\n"
        }
        page += "</tbody>\n</table>\n"
        page += "<div id=\"details\">\n\(details)</div>\n"
        page += "<script>\(Self.script)</script>\n</body>\n</html>\n"
        return page
    }

    var summaryLine: String {
        var s = "baseline: exit \(baseline.exitStatus ?? 0) in \(Self.seconds(baseline.seconds)); "
        s += "\(results.count) run(s) of \(plan.candidates) fault point(s)"
        s += planCuts
        s += "; timeout \(Self.seconds(timeout)); \(Self.seconds(seconds)) in all; seed \(seed); plan id \(plan.id)"
        return s
    }

    /// The bugs, first on the page: signature, stack, the fault points (links to their
    /// cells) and how to reproduce the first.
    func bugsSection(cellID: (ExploreResult) -> String) -> String {
        let all = bugs
        guard !all.isEmpty else { return "" }
        var s = "<section class=\"bugs\" id=\"bugs\">\n<h2>\(all.count) bug(s) from \(findings.count) finding(s)</h2>\n"
        for (n, b) in all.enumerated() {
            s += "<article class=\"bug\" id=\"bug-\(n + 1)\">\n<h3><span class=\"badge \(b.outcome.rawValue)\">\(b.outcome.rawValue)</span> \(Self.h(b.title))</h3>\n"
            if !b.stack.isEmpty {
                s += "<ol class=\"stack\">\n"
                for f in b.stack { s += "<li><code>\(Self.h(f.description))</code></li>\n" }
                s += "</ol>\n"
            }
            s += "<p class=\"label\">hit by \(b.findings.count) fault point(s)</p>\n<ul class=\"points\">\n"
            for r in b.findings { s += "<li><a href=\"#\(cellID(r))\">\(Self.h(describe(r.point)))</a></li>\n" }
            s += "</ul>\n"
            if let witness = b.witness, let cmd = reproduceCommand(witness) {
                s += "<p class=\"label\">reproduce</p><pre class=\"reproduce\">\(Self.h(cmd))</pre>\n"
            }
            s += "</article>\n"
        }
        return s + "</section>\n"
    }

    /// The matrix row of a point: its site, or its context's (each context a run of that cell).
    static func row(of point: FaultPoint) -> CallSite? { point.site ?? point.context?.first }

    static func cellKey(_ function: String, _ site: CallSite?) -> String { function + "\t" + (site?.description ?? "") }

    /// One cell's runs.
    func detail(id: String, function: String, site: CallSite?, runs: [ExploreResult]) -> String {
        let place = site.map { "from " + describe($0) } ?? "any site"
        var s = "<section class=\"detail\" id=\"\(id)\" hidden>\n<h2>\(Self.h(function)) \(Self.h(place)) <a class=\"close\" href=\"#matrix\">close</a></h2>\n"
        for r in runs.sorted(by: { ($0.outcome, $0.point.nth, $0.index) < ($1.outcome, $1.point.nth, $1.index) }) {
            s += "<article class=\"run \(r.outcome.rawValue)\" data-outcome=\"\(r.outcome.rawValue)\">\n"
            s += "<h3><span class=\"badge \(r.outcome.rawValue)\">\(r.outcome.rawValue)</span> \(Self.h(imagePrefix(r.point)))"
            if let context = r.point.context { s += "via \(Self.h(describe(context))), " }
            s += "call \(r.point.nth) \(Self.h(r.point.effect))"
            if let again = r.reproduced { s += again ? " <span class=\"repro ok\">reproduced</span>" : " <span class=\"repro flaky\">flaky</span>" }
            s += "</h3>\n<p>\(Self.h(Self.what(r, baseline: baseline))) — run \(r.index), \(Self.seconds(r.record.seconds))</p>\n"
            for note in r.record.truncationNotes { s += "<p>\(Self.h(note)) in its file</p>\n" }
            let left = r.record.newSurvivors(against: baseline)
            if !left.isEmpty { s += "<p class=\"survivors\">\(Self.h(Self.leftRunning(left)))</p>\n" }
            let tail = r.record.stderr.suffix(r.outcome.isFinding ? 2000 : 400)
            if !tail.isEmpty { s += "<p class=\"label\">stderr (end)</p><pre class=\"stderr\">\(Self.h(String(tail)))</pre>\n" }
            if let cmd = reproduceCommand(r) { s += "<p class=\"label\">reproduce</p><pre class=\"reproduce\">\(Self.h(cmd))</pre>\n" }
            s += "</article>\n"
        }
        return s + "</section>\n"
    }

    /// HTML text escaping (element content and quoted attribute values): the JUnit report's
    /// markup escaping, one definition, which also shows a terminal's control characters in a
    /// program's stderr visibly instead of passing them into the page.
    static func h(_ s: String) -> String { ExploreReport.xml(s, attribute: false) }

    /// The start of a report page, through `<body>`: a page that loads nothing but itself
    /// (its own style, and its own script where it has one).
    static func pageHead(title: String, scripts: Bool) -> String {
        let policy = "default-src 'none'; style-src 'unsafe-inline'" + (scripts ? "; script-src 'unsafe-inline'" : "")
        return """
            <!doctype html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta http-equiv="Content-Security-Policy" content="\(policy)">
            <title>\(h(title))</title>
            <style>\(style)</style>
            </head>
            <body>

            """
    }

    static let style = """
    body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
    h1{font-size:1.3em;margin:0 0 .3em}
    code,pre{font:12px/1.35 ui-monospace,monospace}
    pre{background:#f5f5f5;padding:.5em;overflow:auto;white-space:pre-wrap;max-height:20em}
    .legend{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:1em}
    .swatch{display:inline-block;width:.9em;height:.9em;vertical-align:-.1em;border:1px solid #0003}
    table{border-collapse:collapse;margin:1em 0}
    th,td{border:1px solid #ccc;padding:.2em .5em;text-align:left}
    th.fn{writing-mode:vertical-rl;transform:rotate(180deg);white-space:nowrap}
    td.cell{text-align:center;min-width:2em}
    td.cell a{display:block;color:inherit;text-decoration:none;font-weight:600}
    td.cell.off{opacity:.15}
    td.src{color:#555;font-size:12px}
    .crash{background:#d73027;color:#fff}
    .hang{background:#7b3294;color:#fff}
    .check-failed{background:#f46d43;color:#fff}
    .silent-difference{background:#fdae61}
    .fail-fast{background:#fee08b}
    .handled{background:#a6d96a}
    .absorbed{background:#d9f0d3}
    .not-reached{background:#e0e0e0}
    .detail{border:2px solid #444;padding:.5em 1em;margin:1em 0}
    .detail:target{display:block}
    .detail h2{font-size:1.1em}
    .close{float:right;font-size:.8em}
    .run{border-left:6px solid;padding-left:.7em;margin:.8em 0;background:none;color:inherit}
    .run.crash{border-color:#d73027}.run.hang{border-color:#7b3294}.run.check-failed{border-color:#f46d43}
    .run.handled{border-color:#a6d96a}.run.absorbed{border-color:#d9f0d3}.run.not-reached{border-color:#e0e0e0}.run.fail-fast{border-color:#fee08b}.run.silent-difference{border-color:#fdae61}
    .run h3{font-size:1em;margin:.2em 0}
    .badge{padding:0 .4em;border-radius:3px}
    .repro.ok{color:#1a7f37}.repro.flaky{color:#b35900}
    .label{margin:.3em 0 0;color:#555;font-size:12px}
    .bug{border:1px solid #ccc;padding:.3em 1em;margin:.6em 0}
    .bug h3{font-size:1em;margin:.3em 0}
    ol.stack{margin:.3em 0;padding-left:2em;font-size:12px}
    """

    static let script = """
    (function () {
      "use strict";
      function show() {
        var id = decodeURIComponent(location.hash.slice(1));
        var all = document.querySelectorAll("section.detail");
        for (var i = 0; i < all.length; i++) all[i].hidden = all[i].id !== id;
      }
      function filter() {
        var on = {};
        var boxes = document.querySelectorAll("#legend input[data-outcome]");
        for (var i = 0; i < boxes.length; i++) on[boxes[i].dataset.outcome] = boxes[i].checked;
        var cells = document.querySelectorAll("td.cell");
        for (var j = 0; j < cells.length; j++) {
          var any = cells[j].dataset.outcomes.split(" ").some(function (o) { return on[o]; });
          cells[j].classList.toggle("off", !any);
        }
      }
      window.addEventListener("hashchange", show);
      document.getElementById("legend").addEventListener("change", filter);
      show();
      filter();
      document.body.dataset.ready = "1";
    })();
    """
}
