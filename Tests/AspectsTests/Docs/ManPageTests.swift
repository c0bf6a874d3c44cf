import Foundation
@testable import aspects_gen
import Testing

/// docs/man/aspectctl.1 and docs/man/aspects-rules.5 are the reference: generated from aspectctl's own
/// command tree and config/rule.schema.json (so they cannot drift from them), formatted
/// without a warning, and complete. ASPECTS_REGENERATE=1 rewrites them (and fails on purpose,
/// as GeneratedFilesTests does).
@Suite struct ManPageTests {
    static let pages = ["docs/man/aspectctl.1", "docs/man/aspects-rules.5"]

    static func dumpHelp() throws -> Data {
        let r = try Proc.aspectctl(["--experimental-dump-help"])
        #expect(r.status == 0, "\(r)")
        return Data(r.stdout.utf8)
    }

    static func page(_ path: String) throws -> String {
        try String(contentsOfFile: Paths.root + "/" + path, encoding: .utf8)
    }

    @Test func manPagesAreFresh() throws {
        let version = try Proc.aspectctl(["--version"]).stdout
        let outputs = try ManPages.outputs(root: Paths.root, dumpHelp: try Self.dumpHelp(), version: version)
        #expect(outputs.map(\.path) == Self.pages)
        let regenerate = ProcessInfo.processInfo.environment["ASPECTS_REGENERATE"] == "1"
        for (path, contents) in outputs {
            let full = Paths.root + "/" + path
            if regenerate {
                try contents.write(toFile: full, atomically: true, encoding: .utf8)
                Issue.record("rewrote \(path); unset ASPECTS_REGENERATE and rebuild")
            } else {
                #expect((try? String(contentsOfFile: full, encoding: .utf8)) == contents,
                        "\(path) is stale: run `swift run aspects-gen man` (after `swift build`) and commit it")
            }
        }
    }

    /// What `man` says about a page, as a reader's `man -l` would: groff's warnings (-ww).
    /// Both on a UTF-8 terminal and in a C locale (the ascii device, where a character groff
    /// has no ASCII form for is a warning).
    @Test(.tags(.realPrograms), arguments: pages, ["UTF-8", "ascii"]) func formatsWithoutWarnings(_ path: String, encoding: String) throws {
        let r = try Proc.run("/usr/bin/env", ["man", "--warnings", "-E", encoding, "-l", Paths.root + "/" + path],
                             environment: ["MANWIDTH": "80", "MANPAGER": "cat", "PAGER": "cat", "LC_ALL": encoding == "ascii" ? "C" : "C.UTF-8"])
        #expect(r.status == 0 && r.stderr.isEmpty, "man --warnings -E \(encoding) -l \(path):\n\(r.stderr)")
        #expect(r.stdout.count > 2000, "\(path) formats to text: \(r.stdout.prefix(500))")
    }

    @Test func everyOptionOfAspectctlIsInItsPage() throws {
        let page = try Self.page("docs/man/aspectctl.1")
        let spellings = try ManPages.optionSpellings(dumpHelp: try Self.dumpHelp())
        #expect(spellings.contains("Fl -expect-fired") && spellings.contains("Fl j"), "\(spellings)")
        for s in spellings {
            #expect(page.contains(".It " + s) || page.contains(" , " + s), "aspectctl.1 has no entry for \(s)")
        }
        // every command has its section
        let tree = try JSONSerialization.jsonObject(with: try Self.dumpHelp()) as! [String: Any]
        let commands = ((tree["command"] as! [String: Any])["subcommands"] as! [[String: Any]]).map { $0["commandName"] as! String }
        #expect(commands.contains("run") && commands.contains("explore"))
        for c in commands { #expect(page.contains("\n.Ss \(c)\n"), "aspectctl.1 has no section for \(c)") }
    }

    @Test(.tags(.fast)) func everyFieldOfTheRuleSchemaIsInItsPage() throws {
        let page = try Self.page("docs/man/aspects-rules.5")
        let fields = try ManPages.ruleFields(root: Paths.root)
        #expect(fields.contains { $0 == ("when", "args[].fdpath") } && fields.contains { $0 == ("rule", "failure.errno") } && fields.count > 50)
        // each list is its group's: the items between one .Bl and its .El
        for (group, key) in fields {
            #expect(page.contains(".It Cm \"\(key)\"\n"), "aspects-rules.5 has no entry for \(group) \(key)")
        }
    }

    /// Every exit status aspectctl's sources can produce is explained under EXIT STATUS.
    @Test func everyExitStatusOfTheSourcesIsInTheManPage() throws {
        let page = try Self.page("docs/man/aspectctl.1")
        guard let start = page.range(of: "\n.Sh EXIT STATUS\n"), let end = page.range(of: "\n.Sh ", range: start.upperBound..<page.endIndex) else {
            Issue.record("aspectctl.1 has no EXIT STATUS section"); return
        }
        let section = String(page[start.upperBound..<end.lowerBound])
        var statuses = Set<Int>()
        let dir = Paths.root + "/Sources/aspectctl"
        for file in FileManager.default.enumerator(atPath: dir)!.compactMap({ $0 as? String }) where file.hasSuffix(".swift") {
            let text = try String(contentsOfFile: dir + "/" + file, encoding: .utf8)
            // ExitCode(125), ExitCode(x ? 66 : 65), _exit(74), `return 64  // EX_USAGE`, and the
            // status of a command that could not start: `return (rc == ENOENT ? 127 : 126, false)`,
            // and a status named once: `static let ownFailure: Int32 = 125`
            for pattern in [#"ExitCode\(([^)]*)\)"#, #"_exit\(([^)]*)\)"#, #"return (\d+) +// EX_"#, #"return \([^()]*\? (\d+) : (\d+),"#,
                            #"let \w+: Int32 = (\d+)"#] {
                let regex = try NSRegularExpression(pattern: pattern)
                for m in regex.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                    for g in 1..<m.numberOfRanges {
                        guard let r = Range(m.range(at: g), in: text) else { continue }
                        for n in try NSRegularExpression(pattern: #"(?<![\w$.])\d{1,3}\b"#).matches(in: String(text[r]), range: NSRange(text[r].startIndex..., in: text[r])) {
                            let s = String(text[r])
                            if let v = Int(s[Range(n.range, in: s)!]) { statuses.insert(v) }
                        }
                    }
                }
            }
        }
        #expect(statuses.isSuperset(of: [1, 64, 65, 66, 71, 73, 74, 75, 124, 125, 126, 127]), "\(statuses.sorted())")
        for s in statuses.sorted() where s != 0 {
            #expect(section.contains(".It \(s)\n") || section.contains("\n\(s) ") || section.contains(" \(s) "),
                    "aspectctl.1 EXIT STATUS does not explain \(s)")
        }
    }
}
