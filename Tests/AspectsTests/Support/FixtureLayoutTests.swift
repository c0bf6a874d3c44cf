import Foundation
import Testing

/// Fixtures sit beside their suites' component: Tests/Fixtures/<component>/ mirrors
/// Tests/AspectsTests/<component>/, and a test names a fixture by its file name alone.
@Suite struct FixtureLayoutTests {
    @Test func everyFixtureNameIsUniqueAcrossTheFolders() {
        var seen: [String: [String]] = [:]
        for (folder, files) in FixtureIndex.byFolder { for file in files { seen[file, default: []].append(folder) } }
        let twice = seen.filter { $0.value.count > 1 }
        #expect(!seen.isEmpty)
        #expect(twice.isEmpty, "fixtures named alike in several folders: \(twice)")
    }

    @Test func everyFixtureFolderIsAComponentOfTheSuites() throws {
        let suites = Set(try FileManager.default.contentsOfDirectory(atPath: Paths.root + "/Tests/AspectsTests"))
        let strays = FixtureIndex.byFolder.keys.filter { !suites.contains($0) }
        #expect(strays.isEmpty, "fixture folders with no folder of suites of the same name: \(strays.sorted())")
    }

    @Test func noFixtureIsLeftOutsideAComponentFolder() throws {
        let top = try FileManager.default.contentsOfDirectory(atPath: Paths.fixtures)
        let loose = top.filter { FixtureIndex.byFolder[$0] == nil && !FixtureIndex.generatedFolders.contains($0) }
        #expect(loose.isEmpty, "fixtures outside a component folder: \(loose.sorted())")
    }
}
