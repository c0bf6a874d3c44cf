import ArgumentParser
import AspectsCore
import AspectsExplore
import CAspectsABI
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `aspectctl explore merge`: the campaign's report from its shards' JSON reports.
struct ExploreMerge: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "merge",
        abstract: "Make a campaign's or a suite's report from the JSON reports of its shards (explore --shard I/N --json FILE).",
        usage: ExploreMerge.usageLine,
        discussion: """
        Prints the campaign's text report, as explore would have, and writes its --json, --html and --junit: the runs of every shard in the order of the unsharded campaign, their findings grouped into bugs. The shards must be every part of one plan (the same plan id), each once. Exit status as explore's: 0 no findings, 1 findings, 2 nothing tested.

          aspectctl explore merge shard-1.json shard-2.json --json campaign.json --junit campaign.xml
        """)

    static let usageLine = "aspectctl explore merge <report> ... [--json <file>] [--html <file>] [--junit <file>]"

    @Argument(help: ArgumentHelp("The shards' JSON reports.", valueName: "report"))
    var reports: [String] = []

    @Option(name: .long, help: ArgumentHelp("Also write the merged campaign as JSON.", valueName: "file"))
    var json: String?

    @Option(name: .long, help: ArgumentHelp("Also write the merged campaign as one self-contained HTML page.", valueName: "file"))
    var html: String?

    @Option(name: .long, help: ArgumentHelp("Also write the merged campaign as JUnit XML for CI.", valueName: "file"))
    var junit: String?

    func validate() throws {
        if reports.isEmpty { throw ValidationError("give the shards' JSON reports: aspectctl explore merge shard-1.json shard-2.json ...") }
    }

    func run() throws {
        var findings = 0, tested = true
        try guarded {
            try ExploreReportFiles.check(json: json, html: html, junit: junit)
            var roots: [(source: String, root: JSONNode)] = []
            for path in reports {
                guard let data = FileManager.default.contents(atPath: path) else {
                    throw AspectsError(.noInput, field: "merge", "cannot read \(path)", fix: "give the JSON report each shard wrote with --json")
                }
                do { roots.append((path, try JSONParser.parse(String(decoding: data, as: UTF8.self)))) } catch {
                    throw AspectsError(
                        .malformedJSON, location: path, "not JSON (\(error))", fix: "give the JSON report each shard wrote with --json")
                }
            }
            let suites = roots.filter { SuiteReport.isSuite($0.root) }
            if !suites.isEmpty {
                if suites.count != roots.count {
                    throw AspectsError(
                        .invalidValue, field: "merge",
                        "\(suites.map(\.source).joined(separator: ", ")) are a suite's, the others a campaign's",
                        fix: "merge the shards of one suite, or of one campaign")
                }
                var shards: [(source: String, report: SuiteReport)] = []
                for r in roots { shards.append((r.source, try SuiteReport.decode(r.root, source: r.source))) }
                let merged = try SuiteReport.merge(shards)
                print(merged.text, terminator: "")
                try ExploreReportFiles.write(merged, json: json, html: html, junit: junit)
                findings = merged.findings
                tested = merged.runs > 0
                return
            }
            var shards: [(source: String, report: ExploreReport)] = []
            for r in roots { shards.append((r.source, try ExploreReport.decode(r.root, source: r.source))) }
            let merged = try ExploreReport.merge(shards)
            print(merged.text, terminator: "")
            try ExploreReportFiles.write(merged, json: json, html: html, junit: junit)
            findings = merged.findings.count
            tested = !merged.results.isEmpty
        }
        if !tested {
            Console.write("aspectctl: explore merge: no run was planned, so nothing was tested\n")
            throw ExitCode(2)
        }
        if findings > 0 { throw ExitCode(1) }
    }
}
