// aspects-gen: writes the catalog's generated files from config/catalog.spec.
//
//   swift run aspects-gen            rewrite the generated files
//   swift run aspects-gen --check    exit 1 if any generated file is stale
import AspectConfig
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())
let check = arguments.contains("--check")
let root = arguments.first { !$0.hasPrefix("--") } ?? FileManager.default.currentDirectoryPath
let specPath = root + "/config/catalog.spec"

do {
    let spec = try String(contentsOfFile: specPath, encoding: .utf8)
    let codegen = try CatalogCodegen(specText: spec)
    var stale: [String] = []
    for (path, contents) in codegen.outputs() {
        let full = root + "/" + path
        let current = try? String(contentsOfFile: full, encoding: .utf8)
        guard current != contents else { continue }
        stale.append(path)
        if !check {
            try FileManager.default.createDirectory(atPath: (full as NSString).deletingLastPathComponent,
                                                    withIntermediateDirectories: true)
            try contents.write(toFile: full, atomically: true, encoding: .utf8)
        }
    }
    let c = codegen.catalog
    if check {
        if stale.isEmpty {
            print("generated files are up to date (\(c.functions.count) exports, \(c.groups.count) groups)")
        } else {
            print("stale: \(stale.joined(separator: ", ")); run `swift run aspects-gen`")
            exit(1)
        }
    } else {
        print("\(c.functions.count) exports in \(c.groups.count) groups; wrote \(stale.isEmpty ? "nothing (up to date)" : stale.joined(separator: ", "))")
    }
} catch {
    FileHandle.standardError.write(Data("aspects-gen: \(error)\n".utf8))
    exit(1)
}
