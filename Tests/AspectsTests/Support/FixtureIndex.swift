import Foundation

/// Where each fixture file is: Tests/Fixtures/<component>/<file>, the component named as the
/// folder of the suites that wrote it. A test names a fixture by its file name alone, which is
/// unique across the folders (FixtureLayoutTests).
enum FixtureIndex {
    /// Folders of generated sources, named with their folder by the tests that use them.
    static let generatedFolders: Set<String> = ["generated"]

    /// Each component folder with the files in it.
    static let byFolder: [String: [String]] = {
        let fm = FileManager.default
        let folders = ((try? fm.contentsOfDirectory(atPath: Paths.fixtures)) ?? []).filter { !generatedFolders.contains($0) }
        var result: [String: [String]] = [:]
        for folder in folders {
            var isDirectory: ObjCBool = false
            guard fm.fileExists(atPath: Paths.fixtures + "/" + folder, isDirectory: &isDirectory), isDirectory.boolValue else { continue }
            result[folder] = (try? fm.contentsOfDirectory(atPath: Paths.fixtures + "/" + folder)) ?? []
        }
        return result
    }()

    /// The folder of each file name.
    static let folder: [String: String] = {
        var result: [String: String] = [:]
        for (folder, files) in byFolder { for file in files { result[file] = folder } }
        return result
    }()
}
