import Foundation
import Testing
import AspectsCore

/// `explore --ctest DIR`: the tests of a CMake build directory as ctest lists them, on a
/// CMake project of our own (Tests/Fixtures/Explore/suite_cmake: suite_tool.c's tests, one in
/// a WORKING_DIRECTORY of its own, one disabled), configured and built by Debian's cmake: each
/// test runs where ctest runs it.
@Suite(.serialized) struct SuiteCTestTests {
    static let cmake = ["/usr/bin/cmake", "/usr/local/bin/cmake"].first { FileManager.default.isExecutableFile(atPath: $0) }

    @Test(.tags(.realPrograms), .requires(cmake != nil, "needs cmake and ctest (.ci/run installs them)"))
    func ctestsTestsAreExploredEachInItsWorkingDirectory() throws {
        let dir = NSTemporaryDirectory() + "aspects-suite-ctest-\(UUID().uuidString)"
        defer { TableSegments.removeScratch(dir) }
        let cmake = try #require(Self.cmake)
        let configure = try Proc.run(
            cmake, ["-S", Fixture.path("suite_cmake"), "-B", dir + "/build", "-DSUITE_TOOL_SOURCE=" + Fixture.path("suite_tool.c")])
        #expect(configure.status == 0, "\(configure)")
        let build = try Proc.run(cmake, ["--build", dir + "/build"])
        #expect(build.status == 0, "\(build)")
        let s = try SuiteExploreTests.explore(["--ctest", dir + "/build", "--out", dir + "/out"], json: dir + "/suite.json")
        #expect(s.result.status == 1, "\(s.result)")
        #expect(s.tests.map { ReportJSON.str($0, "name") } == ["parse", "clean", "broken"], "the disabled test is left out: \(s.result)")
        #expect(s.tests.map { ReportJSON.str($0, "status") } == ["explored", "explored", "failing"], "\(s.result)")
        #expect(ReportJSON.str(s.tests[1], "workingDirectory") == dir + "/build/data")
        // (ctest runs a test without one in the build directory, and says so)
        #expect(ReportJSON.str(s.tests[0], "workingDirectory") == dir + "/build")
        let crash = s.bugs.first { ReportJSON.str($0, "outcome") == "crash" }
        #expect(ReportJSON.str(crash, "signature")?.contains("store_record") == true, "\(s.result.stdout)")
    }
}
