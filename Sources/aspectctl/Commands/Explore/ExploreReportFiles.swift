import AspectsCore
import AspectsExplore
import Foundation

/// The report files of a campaign and of merged shards (--json, --html, --junit), one way.
enum ExploreReportFiles {
    /// Whether the reports asked for could be written (`OutputFile.check`), before any work.
    static func check(json: String?, html: String?, junit: String?) throws(AspectsError) {
        for (option, path) in [("--json", json), ("--html", html), ("--junit", junit)] {
            if let path { try OutputFile.check(path, option: option) }
        }
    }

    /// Writes the reports asked for: a campaign's, or shards' merged.
    static func write(_ report: ExploreReport, json: String?, html: String?, junit: String?) throws(AspectsError) {
        if let json { try OutputFile.write(report.json.rendered(pretty: true) + "\n", to: json, option: "--json") }
        if let html { try OutputFile.write(report.html, to: html, option: "--html") }
        if let junit { try OutputFile.write(report.junit, to: junit, option: "--junit") }
    }
}

extension ExploreReportFiles {
    /// Writes a suite's reports: with --html, the index and each explored test's campaign page
    /// beside it (`SuiteReport.pageName`).
    static func write(_ report: SuiteReport, json: String?, html: String?, junit: String?) throws(AspectsError) {
        if let json { try OutputFile.write(report.json.rendered(pretty: true) + "\n", to: json, option: "--json") }
        if let junit { try OutputFile.write(report.junit, to: junit, option: "--junit") }
        guard let html else { return }
        for t in report.tests {
            guard let campaign = t.report else { continue }
            try OutputFile.write(campaign.html, to: SuiteReport.pageName(of: t.index, index: html), option: "--html")
        }
        let index = report.htmlIndex { k in (SuiteReport.pageName(of: k, index: html) as NSString).lastPathComponent }
        try OutputFile.write(index, to: html, option: "--html")
    }
}
