import Foundation
import Testing
import AspectsCore
import AspectsExplore

/// Reports read back from JSON (`explore merge`, HTML and JUnit from JSON) are input like any
/// other: a report explore could not have written is refused, naming the file and the place,
/// exit 65 — never a trap in the code that keys by function or by run.
struct ReportInputTests {
    /// A shard that lists a function twice made `merge --html` trap (SIGILL in
    /// Dictionary(uniqueKeysWithValues:)) and `--json` accept it; a run listed twice is refused
    /// the same way.
    @Test func aShardListingAFunctionOrARunTwiceIsRefusedByName() throws {
        let (dir, cleanup) = ExploreScaleTests.scratch()
        defer { cleanup() }
        var one = ExploreScaleTests.shardReport(ExploreShard(index: 1, count: 2))
        let two = ExploreScaleTests.shardReport(ExploreShard(index: 2, count: 2))
        let profile = FunctionProfile(function: "write", calls: 3, sites: [:])
        one.profiles = [profile, profile]
        try one.json.rendered().write(toFile: dir + "/one.json", atomically: false, encoding: .utf8)
        try two.json.rendered().write(toFile: dir + "/two.json", atomically: false, encoding: .utf8)
        for output in ["--html", "--json"] {
            let r = try Proc.aspectctl(["explore", "merge", dir + "/one.json", dir + "/two.json", output, dir + "/out"])
            #expect(r.status == 65 && r.stderr.contains(dir + "/one.json") && r.stderr.contains("$.functions[1].function")
                    && r.stderr.contains("write is listed twice"), "\(output): \(r)")
            #expect(!FileManager.default.fileExists(atPath: dir + "/out"), "\(output): an output was written")
        }
        var doubled = ExploreScaleTests.shardReport(ExploreShard(index: 1, count: 1))
        doubled.results.append(doubled.results[0])
        #expect(throws: AspectsError.self) { try ExploreReport.decode(doubled.json.rendered(), source: "d") }
        do {
            _ = try ExploreReport.decode(doubled.json.rendered(), source: "d")
        } catch {
            #expect(error.description.contains("is listed twice"), "\(error)")
        }
    }
}
