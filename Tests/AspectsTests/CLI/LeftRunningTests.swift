import Testing
import AspectsExplore

/// What a run left running reads as a count per program: a fork tree of 258 processes is one
/// line, not 258 names.
struct LeftRunningTests {
    @Test(.tags(.fast)) func eachProgramOnceWithItsCountTheMostFrequentFirst() {
        #expect(ExploreReport.leftRunning(["sleep"]) == "left 1 process(es) running: sleep (killed)")
        #expect(ExploreReport.leftRunning(["sleep", "sh", "sleep"]) == "left 3 process(es) running: sleep ×2, sh (killed)")
        let tree = Array(repeating: "forker", count: 250) + (1...8).map { "p\($0)" }
        #expect(ExploreReport.leftRunning(tree) == "left 258 process(es) running: forker ×250, p1, p2, p3, p4, p5, p6, p7, 1 other program(s) (killed)")
    }
}
