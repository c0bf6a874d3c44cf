import ArgumentParser
import AspectsCore
import AspectsPreflight
import Foundation

struct PreflightCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "preflight",
        abstract: "Which catalog functions a program really calls, and which rules can never fire in it.",
        discussion: "Reads the dynamic imports of the program and of the libraries the loader would load for it; runs none of its code. Exit status 1 when a rule can never fire.")

    @OptionGroup var sources: RuleSources
    @OptionGroup var output: OutputOptions

    @Argument(help: ArgumentHelp("The program to inspect.", valueName: "binary"))
    var binary: String

    func run() throws {
        var status: Int32 = 0
        try guarded {
            let path = ProgramPath.find(binary) ?? binary
            let p = try Preflight(binary: path)
            let rules = sources.files.isEmpty && sources.inline.isEmpty && sources.injects.isEmpty ? [] : try sources.load()
            let findings = p.check(rules)
            if findings.contains(where: { $0.severity == .warning }) { status = 1 }
            if output.json {
                printJSON(JSONOut.object([
                    ("binary", .string(path)), ("dynamic", .bool(p.isDynamic)),
                    ("objects", JSONOut.array(p.objects.map { .string($0.path) })),
                    ("imports", JSONOut.array(p.catalogImports.map { i in
                        JSONOut.object([("name", .string(i.name)), ("importers", JSONOut.array(i.importers.map { .string($0) }))])
                    })),
                    ("findings", JSONOut.array(findings.map { f in
                        JSONOut.object([("severity", .string(f.severity.rawValue)), ("rule", f.rule.map { .string($0) }), ("message", .string(f.message))])
                    })),
                ]))
                return
            }
            print("\(path): \(p.linkage)")
            let imports = p.catalogImports
            if !imports.isEmpty {
                print("catalog functions it calls through the dynamic linker:")
                for i in imports {
                    let who = i.importers.map { ($0 as NSString).lastPathComponent }
                    print("  \(i.name)  (\(who.joined(separator: ", ")))")
                }
            }
            for f in findings { print("\(f.severity.rawValue): \(f.rule.map { $0 + ": " } ?? "")\(f.message)") }
        }
        if status != 0 { throw ExitCode(status) }
    }
}
