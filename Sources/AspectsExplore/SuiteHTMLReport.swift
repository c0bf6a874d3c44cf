import Foundation

/// A suite's `--html`: an index page — a row per test (its status, runs, outcomes and bugs)
/// and the bugs across the tests — linking each explored test's own campaign page (the page
/// `explore --html` makes of one campaign), written beside it (`pageName`).
extension SuiteReport {
    /// The file name of test `k`'s page beside the index `index` (`suite.html` → `suite.003.html`).
    package static func pageName(of k: Int, index: String) -> String {
        let base = index.hasSuffix(".html") ? String(index.dropLast(5)) : index
        return base + String(format: ".%03d.html", k + 1)
    }

    /// The index page; `link(k)` is test `k`'s page as the index links it.
    package func htmlIndex(link: (Int) -> String) -> String {
        let h = ExploreReport.h
        var page =
            ExploreReport.pageHead(title: "aspects explore: a suite of \(tests.count) test(s)", scripts: false) + """
            <h1>aspectctl explore: a suite of \(tests.count) test(s)</h1>
            <table class="suite">
            <tr><th>test</th><th>status</th><th>runs</th><th>outcomes</th><th>bugs</th></tr>

            """
        for t in tests {
            let name = t.report == nil ? h(t.test.name) : "<a href=\"\(h(link(t.index)))\">\(h(t.test.name))</a>"
            let outcomes = t.report?.outcomeCounts.filter { $0.1 > 0 }.map { "\($0.0.rawValue) \($0.1)" }.joined(separator: ", ") ?? ""
            let status =
                t.status == .explored
                ? "explored" : (t.status.name == "failing" ? "failing without faults" : "not explored") + ": " + (t.status.reason ?? "")
            page +=
                "<tr><td>\(name)</td><td>\(h(status))</td><td>\(t.report?.results.count ?? 0)</td><td>\(h(outcomes))</td><td>\(t.report?.bugs.count ?? 0)</td></tr>\n"
        }
        page += "</table>\n"
        let all = bugs
        page += all.isEmpty ? "<p>no findings</p>\n" : "<h2>bugs across the suite: \(all.count)</h2>\n<ol>\n"
        for b in all {
            let reached = b.tests.map {
                "<a href=\"\(h(link($0.test)))\">\(h(tests[$0.test].test.name))</a> (\($0.bug.findings.count) fault point(s))"
            }
            page +=
                "<li><b>\(h(b.outcome.rawValue.uppercased()))</b> <code>\(h(b.title))</code><br>reached from \(b.tests.count) test(s): "
                + reached.joined(separator: "; ") + "</li>\n"
        }
        if !all.isEmpty { page += "</ol>\n" }
        return page + "</body>\n</html>\n"
    }
}
