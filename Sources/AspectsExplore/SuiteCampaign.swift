import Foundation
import AspectsCore

/// `explore --tests`: each test of a suite explored as its own campaign — its own baseline,
/// plan, bugs, journal and directory OUT/tests/NNN-name — by the steps of one campaign
/// (`ExploreCampaign.plan`, `PlannedCampaign.run`). Every test is planned first, then run: a
/// shard deals the suite's (test, point) pairs round (`ExploreShard.offset`), so a suite of one
/// long test and nine short ones splits evenly.
package struct SuiteCampaign {
    /// The options every test's campaign takes, its command and --out aside.
    package var template: ExploreOptions
    package var tests: [SuiteTest]
    /// --out: the tests' directories go in OUT/tests.
    package var out: String
    package var strict = false
    package var resume = false
    package var force = false
    package var shard: ExploreShard?

    package init(template: ExploreOptions, tests: [SuiteTest], out: String) {
        (self.template, self.tests, self.out) = (template, tests, out)
    }

    /// What the suite says as it goes: which test (number from 1, count, name) it plans or
    /// runs, the campaign's notes, and its runs' progress.
    package struct Progress: Sendable {
        package var planning: @Sendable (Int, Int, String) -> Void
        package var running: @Sendable (Int, Int, String, Int) -> Void
        package var notes: CampaignNotes
        package var update: @Sendable (Int, Int, Int) -> Void
        package var finish: @Sendable () -> Void

        package init(
            planning: @escaping @Sendable (Int, Int, String) -> Void, running: @escaping @Sendable (Int, Int, String, Int) -> Void,
            notes: CampaignNotes, update: @escaping @Sendable (Int, Int, Int) -> Void, finish: @escaping @Sendable () -> Void
        ) {
            (self.planning, self.running, self.notes, self.update, self.finish) = (planning, running, notes, update, finish)
        }
    }

    /// A test's directory under --out: its number and a file name made of its name.
    package func directory(of k: Int) -> String {
        let name = tests[k].name.drop { !$0.isLetter && !$0.isNumber }
        let slug = String(name.map { $0.isLetter || $0.isNumber || "._-".contains($0) ? $0 : "_" }.prefix(60))
        return out + "/tests/" + String(format: "%03d-", k + 1) + slug
    }

    /// The options of test `k`'s campaign. A test passes when it exits 0: without
    /// --expect-status, a test that exits otherwise with no fault is failing, not explored.
    /// A test with a directory of its own runs its runs one at a time.
    func options(of k: Int) -> ExploreOptions {
        var o = template
        (o.command, o.directory, o.outDirectory) = (tests[k].argv, tests[k].directory, directory(of: k))
        o.expectStatus = template.expectStatus ?? 0
        // Runs that share the test's directory would meet each other's files: one at a time
        // (ctest, too, never runs one test twice at once).
        if o.directory != nil { o.jobs = 1 }
        return o
    }

    /// Plans every test, then runs each one's (shard's) points; the suite's report.
    package func run(progress: Progress) throws(AspectsError) -> SuiteReport {
        let started = Date()
        var entries: [SuiteReport.Test] = []
        var planned: [(Int, PlannedCampaign, CampaignJournal.Contents?)] = []
        for k in tests.indices {
            progress.planning(k + 1, tests.count, tests[k].name)
            var entry = SuiteReport.Test(index: k, test: tests[k], directory: directory(of: k), status: .explored)
            do {
                try FileManager.default.createDirectory(atPath: entry.directory, withIntermediateDirectories: true)
            } catch {
                throw AspectsError(.system, field: "--out", "cannot create \(entry.directory): \(error.localizedDescription)")
            }
            let journaled = try CampaignJournal.prepare(entry.directory, resume: resume, force: force)
            ExploreInterruption.work = entry.directory + "/work"
            do {
                let (p, refusal) = try ExploreCampaign.plan(options(of: k), strict: strict, notes: progress.notes)
                if let p {
                    if p.plan.points.isEmpty { entry.status = .untested(p.emptyPlanReason) } else { planned.append((k, p, journaled)) }
                } else {
                    entry.status = .untested(refusal ?? "refused")
                }
            } catch {
                if ExploreInterruption.isEnding { throw error }
                guard let status = Self.skipped(by: error, expectStatusGiven: template.expectStatus != nil) else { throw error }
                entry.status = status
            }
            entries.append(entry)
        }
        // (test, point) pairs in list order: a test's first point's place is its shard's offset
        var offset = 0
        for (k, p, journaled) in planned {
            let shard = self.shard.map { ExploreShard(index: $0.index, count: $0.count, offset: offset) }
            offset += p.plan.points.count
            let mine = shard?.size(of: p.plan.points.count) ?? p.plan.points.count
            progress.running(k + 1, tests.count, tests[k].name, mine)
            ExploreInterruption.work = entries[k].directory + "/work"
            let (journal, done) = try p.openJournal(
                shard: shard, shardText: shard.map { "\($0)+\($0.offset)" }, journaled: journaled,
                warning: progress.notes.warning)
            entries[k].report = try p.run(shard: shard, journal: journal, done: done, progress: progress.update)
            progress.finish()
        }
        var report = SuiteReport(tests: entries, seconds: Date().timeIntervalSince(started))
        report.shard = shard
        return report
    }

    /// How a test whose campaign could not start is reported: failing when its baseline (no
    /// fault) failed — its status, a signal, a timeout, its check — else not explored, with
    /// the reason. nil: an error of the suite's options (an unknown --function), which ends it.
    static func skipped(by error: AspectsError, expectStatusGiven: Bool) -> SuiteReport.Status? {
        // (the baseline's refusals all say what "the baseline" did: `ExploreCampaign.survey`)
        let baselineFailed = error.message.hasPrefix("the baseline") || error.message.hasPrefix("the check fails after the baseline")
        if baselineFailed, ["command", "--expect-status", "--check"].contains(error.field) {
            // the suite's own expectation, not the user's option
            let why =
                expectStatusGiven
                ? error.message
                : error.message.replacingOccurrences(of: "not 0 as --expect-status says", with: "not 0 (a test passes when it exits 0)")
            return .failing(why)
        }
        if error.code == .unknownSymbol || !["command", "--function", nil].contains(error.field) { return nil }
        return .untested(error.message)
    }
}
