import Foundation
import AspectsCore
import AspectsRules

/// A campaign up to its runs: the baseline surveyed and repeated, what it saw, and the plan.
/// One command's campaign and each test of a suite's (`SuiteCampaign`) are made by the same
/// steps, here; `run` then makes the runs.
package struct PlannedCampaign: Sendable {
    package let campaign: ExploreCampaign
    package let baseline: RunRecord
    /// The chosen functions' profiles (the family companions only counted are left out).
    package let profiles: [FunctionProfile]
    package let comparison: BaselineComparison
    package let coverage: ExploreCoverage
    package let plan: ExplorePlan
    /// The options as given (the command as written), with `faults` as the plan has them:
    /// what the plan's id and the journal's settings are made of.
    package let options: ExploreOptions
}

/// What a campaign says while it prepares: a progress note, a warning for the user.
package struct CampaignNotes: Sendable {
    package var note: @Sendable (String) -> Void
    package var warning: @Sendable (String) -> Void

    package init(note: @escaping @Sendable (String) -> Void, warning: @escaping @Sendable (String) -> Void) {
        (self.note, self.warning) = (note, warning)
    }
}

extension ExploreCampaign {
    /// The fault kinds of `--fault` words, each once in the order given; error when none.
    package static func faultKinds(_ words: [String]) -> [FaultKind] {
        var kinds: [FaultKind] = []
        for k in words.compactMap(FaultKind.init(rawValue:)) where !kinds.contains(k) { kinds.append(k) }
        return kinds.isEmpty ? [.error] : kinds
    }

    /// Makes the campaign of `options` and plans it: the baseline (refused, by an error, when it
    /// fails, differs in status, or with `strict` differs at all), the coverage, the plan.
    /// Returns nil with the reason when `strict` refuses a baseline whose runs differ.
    package static func plan(_ options: ExploreOptions, strict: Bool, notes: CampaignNotes) throws(AspectsError) -> (
        PlannedCampaign?, refusal: String?
    ) {
        var options = options
        options.faults = faultKinds(options.faults.map(\.rawValue))
        let campaign = try ExploreCampaign(options: options)
        let chosen = try campaign.chosenFunctions()
        let kinds = options.faults
        if kinds.contains(.short), !chosen.contains(where: { FaultKind.short.applies(to: $0, in: campaign.catalog) }) {
            let able = campaign.catalog.groups.filter { $0.faults.contains(.short) }.map { campaign.catalog.primary(of: $0).name }
            notes.warning(
                "--fault short: none of the functions explored transfers a count that could be cut short, so no short transfer is planned; it applies to \(able.joined(separator: ", "))"
            )
        }
        notes.note("baseline: \(options.command.joined(separator: " ")) with \(chosen.count) function(s) logged")
        // The family companions are counted, never failed: to say what a function never
        // called could be replaced by.
        let surveyed = chosen + ExploreCoverage.familyCompanions(of: chosen, catalog: campaign.catalog)
        let (baseline, allProfiles, images) = try campaign.survey(functions: surveyed)
        let profiles = allProfiles.filter { chosen.contains($0.function) }
        notes.note("baseline: run again \(options.baselines - 1) time(s) to compare")
        let comparison = try campaign.repeatBaseline(functions: surveyed, first: baseline, profiles: allProfiles)
        if let why = comparison.refusal(first: baseline, expected: options.expectStatus) {
            throw AspectsError(.invalidValue, field: "command", why, fix: "explore a command whose runs with no fault end alike")
        }
        if let warning = comparison.warning {
            notes.warning(warning)
            if strict {
                return (
                    nil,
                    "--strict: the baseline runs differ, so the campaign's outcomes could not be trusted; "
                        + "make the command's runs independent (keep its files in the working directory) or leave out --strict"
                )
            }
        }
        // The program's own imports: its libraries' (what a Preflight would read too) are not
        // what the coverage says the program calls.
        let imports = (try? ProgramPath.resolve(options.command[0])).flatMap { try? ELFImports(path: $0) }?.imports
        var coverage = ExploreCoverage.make(
            chosen: chosen, named: options.functions, profiles: allProfiles, names: campaign.calledNames,
            imports: imports, catalog: campaign.catalog)
        coverage.addImages(images, profiles: profiles, processes: options.processes)
        coverage.addUnsurveyed(campaign.unsurveyedCalls, profiles: profiles)
        var plan = ExplorePlan.make(
            profiles: profiles, strategy: options.strategy, errnos: campaign.errnos(for:),
            kinds: { f in kinds.filter { $0.applies(to: f, in: campaign.catalog) } },
            maxRuns: options.maxRuns, seed: options.seed, processes: options.processes,
            contextDepth: options.contextDepth,
            startup: options.strategy == .context ? campaign.startupFrames(of: profiles) : [])
        plan.identify(options)
        return (
            PlannedCampaign(
                campaign: campaign, baseline: baseline, profiles: profiles, comparison: comparison,
                coverage: coverage, plan: plan, options: options), nil
        )
    }
}

extension PlannedCampaign {
    /// The journal to write the runs to, and the runs already done: with a journal read back
    /// (`--resume`) those of it (whose plan must be this one), else none in a new journal.
    /// `shardText` is the shard as the journal's settings keep it.
    package func openJournal(
        shard: ExploreShard?, shardText: String?, journaled: CampaignJournal.Contents?,
        warning: (String) -> Void
    ) throws(AspectsError) -> (CampaignJournal, [ExploreResult]) {
        let out = campaign.out
        let header = CampaignJournal.Header(planID: plan.id, points: plan.points.count, settings: options.journalSettings(shard: shardText))
        guard let journaled else { return (try CampaignJournal.create(in: out, header: header), []) }
        if let why = CampaignJournal.mismatch(journal: journaled.header, now: header) {
            throw AspectsError(
                .invalidValue, field: "--resume", why,
                fix: "resume with the options the campaign started with, or start it again with --force")
        }
        for note in journaled.notes { warning(note) }
        let done = journaled.results.filter { r in
            plan.points.indices.contains(r.index) && plan.points[r.index] == r.point && shard.map { $0.owns(r.index) } != false
        }
        return (try CampaignJournal.reopen(in: out, after: journaled), done)
    }

    /// Makes the runs (`ExploreCampaign.execute`) and the report, with the coverage and
    /// baselines the planning saw.
    package func run(
        shard: ExploreShard?, journal: CampaignJournal?, done: [ExploreResult],
        progress: @escaping @Sendable (Int, Int, Int) -> Void
    ) throws(AspectsError) -> ExploreReport {
        var report = try campaign.execute(
            plan: plan, baseline: baseline, profiles: profiles, shard: shard,
            journal: journal, done: done, progress: progress)
        // What a run's sweep could not tell as its own (a daemon of --setup or --check, or
        // one that cleared its environment) ends with the campaign.
        ProcessTree.killDescendants()
        report.coverage = coverage
        report.baselines = comparison
        return report
    }

    /// Why the campaign planned no run: it tested nothing, which is not a pass.
    package var emptyPlanReason: String {
        Self.emptyPlanReason(coverage, strategy: options.strategy.rawValue, processes: options.processes)
    }

    /// Why a campaign planned no run, from its coverage.
    package static func emptyPlanReason(_ coverage: ExploreCoverage, strategy: String, processes: [String] = []) -> String {
        let never = coverage.functions.filter { $0.calls == 0 }.map(\.function)
        if !processes.isEmpty, !coverage.images.contains(where: { $0.planned && $0.calls > 0 }) {
            let called = coverage.images.filter { $0.calls > 0 }.map(\.path)
            return "no run was planned: no image that called the functions matches --process \(processes.joined(separator: ", "))"
                + (called.isEmpty ? "" : " (they were called by \(called.joined(separator: ", ")))")
                + ", so nothing was tested; give a glob matching one of them (a glob without / matches the file name)"
        }
        let why =
            never.count == coverage.functions.count
            ? "the program never called \(never.joined(separator: ", ")) in the baseline"
            : "no fault point could be made of the calls (--strategy \(strategy)) of \(coverage.functions.map(\.function).joined(separator: ", "))"
        return
            "no run was planned: \(why), so nothing was tested; name functions it calls (see the coverage lines above, or `aspectctl calls -- COMMAND`)"
    }
}
