import ArgumentParser
import AspectsCore
import AspectsExplore
import Foundation

/// `aspectctl explore --tests FILE | --tests-from CMD | --ctest DIR`: the suite's tests, each
/// explored as its own campaign with the options given (`SuiteCampaign`).
extension ExploreCampaignCommand {
    func runSuite() throws {
        var findings = 0
        var tested = true
        defer { if ExploreInterruption.isEnding { ExploreInterruption.awaitEnd() } }
        try guardedUnlessInterrupted {
            try ExploreReportFiles.check(json: json, html: html, junit: junit)
            try OutputFile.checkDirectory(out, option: "--out")
            let list: [SuiteTest]
            if let tests {
                list = try TestSuite.load(file: tests)
            } else if let testsFrom {
                list = try TestSuite.load(from: testsFrom)
            } else {
                list = try TestSuite.load(ctest: ctest!)
            }
            var suite = SuiteCampaign(template: try exploreOptions(command: [], out: out), tests: list, out: out)
            (suite.strict, suite.resume, suite.force) = (strict, resume, force)
            suite.shard = try self.shard.map { s throws(AspectsError) in try ExploreShard(parsing: s) }
            ExploreInterruption.watch(workDirectory: out + "/work")
            let bar = progressBar()
            let progress = SuiteCampaign.Progress(
                planning: { k, n, name in bar.note("test \(k)/\(n) \(name): baseline") },
                running: { k, n, name, runs in
                    bar.note("test \(k)/\(n) \(name): \(runs) run(s)")
                    bar.start(total: runs)
                },
                notes: bar.campaignNotes,
                update: { done, total, found in bar.update(done: done, total: total, findings: found) },
                finish: { bar.finish() })
            let report = try suite.run(progress: progress)
            print(report.text, terminator: "")
            try ExploreReportFiles.write(report, json: json, html: html, junit: junit)
            findings = report.findings
            tested = report.tests.contains { $0.status == .explored }
        }
        if !tested {
            Console.write("aspectctl: explore: no test of the suite was explored (see why above), so nothing was tested\n")
            throw ExitCode(2)
        }
        if findings > 0 { throw ExitCode(1) }
    }
}
