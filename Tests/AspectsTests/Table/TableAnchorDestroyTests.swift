import Foundation
import Testing
import AspectsCore
import AspectsTable
#if canImport(Glibc)
import Glibc
#endif

/// A table destroyed by the process that made it, through the anchor it holds (what explore
/// does with each run's table): its segment and its name go, its attachment stays readable;
/// a name that no longer names the anchor is left alone, with the segment.
@Suite struct TableAnchorDestroyTests {
    func scratchDir() throws -> String {
        let dir = NSTemporaryDirectory() + "aspects-anchor-destroy-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    @Test(.tags(.fast)) func theMakerDestroysItsTableThroughItsAnchor() throws {
        let dir = try scratchDir()
        defer { TableSegments.removeScratch(dir) }
        let name = try TableName(dir + "/t")
        let table = try AdviceTable.create(name, ruleCapacity: 1, eventCapacity: 16, statCapacity: 16)
        let anchor = try #require(TableSegments.anchor(name.path))
        #expect(TableSegments.holds(anchor.shmid, anchor.identity))
        try table.destroy()
        #expect(!FileManager.default.fileExists(atPath: name.path), "the name is gone")
        #expect(TableSegments.status(anchor.shmid) == nil, "the segment is removed (it goes when the maker detaches)")
        #expect(table.rules().isEmpty, "the maker still reads its attachment")
    }

    @Test(.tags(.fast)) func aNameThatNamesAnotherFileIsLeftAlone() throws {
        let dir = try scratchDir()
        defer { TableSegments.removeScratch(dir) }  // the moved table too
        let name = try TableName(dir + "/t")
        let table = try AdviceTable.create(name, ruleCapacity: 1, eventCapacity: 16, statCapacity: 16)
        let anchor = try #require(TableSegments.anchor(name.path))
        #expect(rename(name.path, dir + "/moved") == 0)
        try "someone else's\n".write(toFile: name.path, atomically: false, encoding: .utf8)
        #expect(throws: AspectsError.self) { try table.destroy() }
        #expect(try String(contentsOfFile: name.path, encoding: .utf8) == "someone else's\n", "the other file is untouched")
        #expect(TableSegments.holds(anchor.shmid, anchor.identity), "the segment stays with its anchor")
    }
}
