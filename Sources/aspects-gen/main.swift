// aspects-gen: writes the generated files of the repository.
//
//   swift run aspects-gen [--check] [ROOT]
//       the files of both specs: the catalog's and the rule slot's
//   swift run aspects-gen catalog [--check] [ROOT]
//       the catalog's files, from config/catalog.spec
//   swift run aspects-gen rule-slot [--check] [ROOT]
//       the rule slot's C struct and pins, RuleSlot.swift and the schema's capacities, from
//       config/rule-slot.spec
//   swift run aspects-gen man [--check] [--aspectctl PATH] [ROOT]
//       docs/man/aspectctl.1 and docs/man/aspects-rules.5, from aspectctl's command tree (the aspectctl
//       built beside aspects-gen by `swift build`, or PATH) and config/rule.schema.json
//
// --check writes nothing and exits 1 if a generated file is stale.
import AspectsCodegen
import Foundation

/// The command line: the mode, --check, --aspectctl PATH and the package root.
struct Options {
    enum Mode: String { case specs, catalog, ruleSlot = "rule-slot", man }
    var mode = Mode.specs
    var check = false
    var aspectctl: String?
    var root = FileManager.default.currentDirectoryPath

    init(_ arguments: [String]) {
        var rest = arguments[...]
        if let first = rest.first, !first.hasPrefix("-"), let m = Mode(rawValue: first), m != .specs { mode = m; rest = rest.dropFirst() }
        while let a = rest.popFirst() {
            switch a {
            case "--check": check = true
            case "--aspectctl":
                guard let path = rest.popFirst() else { fail("--aspectctl takes the path of an aspectctl executable") }
                aspectctl = path
            case _ where a.hasPrefix("-"): fail("unknown option \(a); aspects-gen [catalog | rule-slot | man] [--check] [--aspectctl PATH] [ROOT]")
            default: root = a
            }
        }
    }
}

let options = Options(Array(CommandLine.arguments.dropFirst()))
let root = options.root
let check = options.check
let command = "swift run aspects-gen" + (options.mode == .specs ? "" : " " + options.mode.rawValue)

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

/// The catalog's outputs, and what to say about them.
func catalogOutputs() throws -> (outputs: [(path: String, contents: String)], summary: String) {
    let codegen = try CatalogCodegen(specText: try String(contentsOfFile: root + "/config/catalog.spec", encoding: .utf8))
    return (codegen.outputs() + [try ExportsScript.output(catalog: codegen.catalog, root: root)], "\(codegen.catalog.functions.count) exports in \(codegen.catalog.groups.count) groups; ")
}

/// The rule slot's outputs, and what to say about them.
func ruleSlotOutputs() throws -> (outputs: [(path: String, contents: String)], summary: String) {
    let codegen = try RuleSlotCodegen(specText: try String(contentsOfFile: root + "/config/rule-slot.spec", encoding: .utf8))
    let outputs = try codegen.outputs { try String(contentsOfFile: root + "/" + $0, encoding: .utf8) }
    return (outputs, "rule slot of \(codegen.spec.fields.count) fields in \(codegen.spec.size) bytes; ")
}

do {
    let outputs: [(path: String, contents: String)]
    var summary = ""
    switch options.mode {
    case .man:
        outputs = try ManPages.outputs(root: root, dumpHelp: try aspectctl(["--experimental-dump-help"]),
                                       version: String(decoding: try aspectctl(["--version"]), as: UTF8.self))
    case .catalog: (outputs, summary) = try catalogOutputs()
    case .ruleSlot: (outputs, summary) = try ruleSlotOutputs()
    case .specs:
        let (catalog, slot) = (try catalogOutputs(), try ruleSlotOutputs())
        (outputs, summary) = (catalog.outputs + slot.outputs, catalog.summary + slot.summary)
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
