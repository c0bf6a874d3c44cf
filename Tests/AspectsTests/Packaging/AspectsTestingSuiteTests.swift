import Foundation
import Testing
import AspectsTesting

/// `Aspects.explore(tests:)`: a suite of commands explored from a Swift test through the
/// aspectctl binary, its bugs grouped across the tests as the command line groups them.
@Suite(.serialized) struct AspectsTestingSuiteTests {
    @Test func aSuiteFromSwiftGivesEachTestAndTheBugsAcrossThem() throws {
        let bin = try Fixture.build("suite_tool", flags: ["-g", "-O0"])
        let out = NSTemporaryDirectory() + "aspects-testing-suite-\(UUID().uuidString)"
        defer { TableSegments.removeScratch(out) }
        let s = try Aspects.explore(
            tests: [[bin, "parse"], [bin, "format"], [bin, "broken"]], functions: ["malloc"], maxRuns: 2, jobs: 2, out: out)
        #expect(s.status == 1, "\(s.text)")
        #expect(s.tests.map(\.status) == ["explored", "explored", "failing"], "\(s.text)")
        #expect(s.tests[2].reason?.contains("status 3") == true, "\(s.tests[2])")
        #expect(s.tests[0].runs >= 1 && s.tests[0].bugs.count == 1, "\(s.text)")
        let crash = try #require(s.bugs.first { $0.outcome == .crash }, "\(s.text)")
        #expect(crash.signature.contains("store_record"), "\(crash)")
        #expect(crash.tests.count == 2 && crash.tests[0].contains("parse") && crash.tests[1].contains("format"), "\(crash.tests)")
    }
}
