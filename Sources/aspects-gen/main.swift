// aspects-gen: writes the generated files of the repository.
//
//   swift run aspects-gen [--check] [ROOT]
//       the catalog's files, from config/catalog.spec
//   swift run aspects-gen man [--check] [--aspectctl PATH] [ROOT]
//       docs/man/aspectctl.1 and docs/man/aspects-rules.5, from aspectctl's command tree (the aspectctl
//       built beside aspects-gen by `swift build`, or PATH) and config/rule.schema.json
//
// --check writes nothing and exits 1 if a generated file is stale.
import AspectConfig
import Foundation

/// The command line: the mode, --check, --aspectctl PATH and the package root.
struct Options {
    var man = false
    var check = false
    var aspectctl: String?
    var root = FileManager.default.currentDirectoryPath

    init(_ arguments: [String]) {
        var rest = arguments[...]
        if rest.first == "man" { man = true; rest = rest.dropFirst() }
        while let a = rest.popFirst() {
            switch a {
            case "--check": check = true
            case "--aspectctl":
                guard let path = rest.popFirst() else { fail("--aspectctl takes the path of an aspectctl executable") }
                aspectctl = path
            case _ where a.hasPrefix("-"): fail("unknown option \(a); aspects-gen [man] [--check] [--aspectctl PATH] [ROOT]")
            default: root = a
            }
        }
    }
}

let options = Options(Array(CommandLine.arguments.dropFirst()))
let root = options.root
let check = options.check
let command = options.man ? "swift run aspects-gen man" : "swift run aspects-gen"

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("aspects-gen: \(message)\n".utf8))
    exit(1)
}

/// Writes each output that differs from the file (or, with --check, only names it); the stale paths.
func sync(_ outputs: [(path: String, contents: String)]) throws -> [String] {
    var stale: [String] = []
    for (path, contents) in outputs {
        let full = root + "/" + path
        guard (try? String(contentsOfFile: full, encoding: .utf8)) != contents else { continue }
        stale.append(path)
        if !check {
            try FileManager.default.createDirectory(atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try contents.write(toFile: full, atomically: true, encoding: .utf8)
        }
    }
    return stale
}

/// What aspectctl prints with these arguments.
func aspectctl(_ args: [String]) throws -> Data {
    let exe = options.aspectctl ?? URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent().path + "/aspectctl"
    guard FileManager.default.isExecutableFile(atPath: exe) else {
        fail("no aspectctl at \(exe); build it (swift build --product aspectctl) or pass --aspectctl PATH")
    }
    let p = Process()
    p.executableURL = URL(fileURLWithPath: exe)
    p.arguments = args
    let out = Pipe()
    p.standardOutput = out
    try p.run()
    let data = out.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    guard p.terminationStatus == 0 else { fail("\(exe) \(args.joined(separator: " ")) exited \(p.terminationStatus)") }
    return data
}

do {
    let outputs: [(path: String, contents: String)]
    var summary = ""
    if options.man {
        outputs = try ManPages.outputs(root: root, dumpHelp: try aspectctl(["--experimental-dump-help"]),
                                       version: String(decoding: try aspectctl(["--version"]), as: UTF8.self))
    } else {
        let codegen = try CatalogCodegen(specText: try String(contentsOfFile: root + "/config/catalog.spec", encoding: .utf8))
        outputs = codegen.outputs()
        summary = "\(codegen.catalog.functions.count) exports in \(codegen.catalog.groups.count) groups; "
    }
    let stale = try sync(outputs)
    if check {
        guard stale.isEmpty else {
            print("stale: \(stale.joined(separator: ", ")); run `\(command)`")
            exit(1)
        }
        print(summary + "generated files are up to date")
    } else {
        print(summary + "wrote \(stale.isEmpty ? "nothing (up to date)" : stale.joined(separator: ", "))")
    }
} catch {
    fail("\(error)")
}
