import Foundation
import Testing

/// Every command example of README.md and docs/*.md runs here, on the real programs it names,
/// and must do what the page says it does — so an example cannot drift from the program.
///
/// The convention, which renders as plain code on GitHub:
///
///     ```sh example            the whole block is the script
///     ```console example       only `$ ` lines (with their `\` continuations and here-documents)
///                              are the script; the other lines are the output shown to the reader
///     ```swift example         test code that stands verbatim in DocSwiftExamplesTests.swift
///     <!-- expect: exit 1, stderr contains "No such file" -->   right after the block
///
/// Clauses of `expect`: `exit N` (the script's status; without it, 0), `stdout contains "…"`,
/// `stderr contains "…"`, `output contains "…"` (either), `file PATH contains "…"`, and
/// `… lacks "…"`; `\n` in the text is a newline. A `sh`, `bash` or `console` block that is not
/// an example says why with `<!-- not run: reason -->` after it, so no command block is left
/// out unnoticed.
///
/// Each script runs under `bash -e` in a fresh directory holding a copy of `config/` and links
/// to `Sources/` and `Tests/` (the pages' examples run from the repository's root), with the
/// built aspectctl first on PATH and `ASPECTS_PRELOAD` naming the built libaspects.so, as the
/// README tells a reader to set them (and pytest from the venv .ci/run makes, where the
/// plugin is installed).
@Suite struct DocExamplesTests {
    /// Programs an example may name beyond bash and coreutils: one that is missing makes the
    /// block skipped, by name, never passed.
    static let optionalPrograms = ["sqlite3", "curl", "python3", "git", "tar", "gzip", "cc", "pytest", "sha256sum", "swift"]

    struct Expectation: Sendable {
        var status: Int32 = 0
        var contains: [(stream: String, text: String)] = []
        var lacks: [(stream: String, text: String)] = []
    }

    struct Block: Sendable, CustomTestStringConvertible {
        var page: String
        var line: Int
        var language: String
        var isExample: Bool
        var notRunReason: String?
        var script: String
        var expectation: Expectation?
        var expectError: String?
        var testDescription: String { "\(page):\(line)" }
    }

    /// The pages: README.md and every docs/*.md (docs/man is not markdown).
    static let pages: [String] = {
        let docs = (try? FileManager.default.contentsOfDirectory(atPath: Paths.root + "/docs")) ?? []
        return ["README.md"] + docs.filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
    }()

    static let blocks: [Block] = pages.flatMap { page in
        parse(page: page, text: (try? String(contentsOfFile: Paths.root + "/" + page, encoding: .utf8)) ?? "")
    }

    static let commandLanguages: Set<String> = ["sh", "bash", "console", "shell"]

    /// The fenced blocks of one page, with the comment that follows each.
    static func parse(page: String, text: String) -> [Block] {
        let lines = text.components(separatedBy: "\n")
        var blocks: [Block] = []
        var i = 0
        while i < lines.count {
            let open = lines[i]
            guard open.hasPrefix("```") else { i += 1; continue }
            let info = open.dropFirst(3).split(separator: " ").map(String.init)
            let start = i + 1
            var end = start
            while end < lines.count, !lines[end].hasPrefix("```") { end += 1 }
            let body = Array(lines[start..<min(end, lines.count)])
            var next = end + 1
            while next < lines.count, lines[next].trimmingCharacters(in: .whitespaces).isEmpty { next += 1 }
            let comment = next < lines.count ? lines[next] : ""
            let language = info.first ?? ""
            var block = Block(page: page, line: start, language: language, isExample: info.dropFirst().contains("example"),
                              script: language == "console" ? consoleScript(body) : body.joined(separator: "\n"))
            if let reason = commentValue(comment, key: "not run") { block.notRunReason = reason }
            if let clauses = commentValue(comment, key: "expect") {
                do { block.expectation = try parseExpectation(clauses) } catch { block.expectError = "\(error)" }
            } else if block.isExample {
                block.expectation = Expectation()
            }
            blocks.append(block)
            i = end + 1
        }
        return blocks
    }

    /// The commands of a console transcript: `$ ` lines, with the lines a trailing `\` continues
    /// and the body of a here-document one of them starts (up to its end word).
    static func consoleScript(_ body: [String]) -> String {
        var script: [String] = []
        var continuing = false
        var hereEnd: String?
        for line in body {
            if let end = hereEnd {
                script.append(line)
                if line == end { hereEnd = nil }
                continue
            }
            if continuing {
                script.append(line)
            } else if line.hasPrefix("$ ") {
                script.append(String(line.dropFirst(2)))
            } else {
                continue
            }
            continuing = line.hasSuffix("\\")
            if let m = line.firstMatch(of: #/<<-?\s*['"]?(?<word>[A-Za-z_]+)['"]?/#) { hereEnd = String(m.output.word) }
        }
        return script.joined(separator: "\n")
    }

    /// `<!-- key: value -->` on one line.
    static func commentValue(_ line: String, key: String) -> String? {
        let t = line.trimmingCharacters(in: .whitespaces)
        guard t.hasPrefix("<!-- \(key):"), t.hasSuffix("-->") else { return nil }
        return String(t.dropFirst("<!-- \(key):".count).dropLast(3)).trimmingCharacters(in: .whitespaces)
    }

    struct ExpectationError: Error, CustomStringConvertible { var description: String }

    static func parseExpectation(_ text: String) throws -> Expectation {
        var e = Expectation()
        var rest = Substring(text)
        let clause = #/^\s*(?:exit (?<status>\d+)|(?<what>stdout|stderr|output|file (?<path>[^ ]+)) (?<verb>contains|lacks) "(?<text>(?:[^"\\]|\\.)*)")\s*(?:,|$)/#
        while !rest.trimmingCharacters(in: .whitespaces).isEmpty {
            guard let m = rest.firstMatch(of: clause) else {
                throw ExpectationError(description: "cannot read \"\(rest)\": write exit N, stdout/stderr/output/file PATH contains \"…\", or … lacks \"…\", separated by commas")
            }
            if let s = m.output.status { e.status = Int32(s)! }
            if let what = m.output.what {
                let stream = m.output.path.map { "file " + $0 } ?? String(what)
                let value = String(m.output.text ?? "").replacingOccurrences(of: #"\n"#, with: "\n").replacingOccurrences(of: #"\""#, with: "\"").replacingOccurrences(of: #"\\"#, with: "\\")
                if m.output.verb == "lacks" { e.lacks.append((stream, value)) } else { e.contains.append((stream, value)) }
            }
            rest = rest[m.range.upperBound...]
        }
        return e
    }

    /// The venv .ci/run makes, with pytest and the plugin (`pip install ./python`) in it.
    static let pytestVenv = Paths.root + "/.build/pytest-venv/bin"

    /// The examples' PATH: the built aspectctl first, then the plugin's venv when it is there.
    static let examplePath: String = {
        var dirs = [Paths.build]
        if FileManager.default.isExecutableFile(atPath: pytestVenv + "/pytest") { dirs.append(pytestVenv) }
        return (dirs + [ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"]).joined(separator: ":")
    }()

    /// The programs of `optionalPrograms` a script names (as words) that are not installed. A
    /// pytest without the plugin would fail the example for a reason not its own, so pytest is
    /// there only with the venv.
    static func missingPrograms(_ script: String, among programs: [String] = optionalPrograms) -> [String] {
        let path = examplePath.split(separator: ":")
        return programs.filter { name in
            guard script.firstMatch(of: try! Regex("(^|[^A-Za-z0-9_./-])\(name)([^A-Za-z0-9_.-]|$)").anchorsMatchLineEndings()) != nil else { return false }
            if name == "pytest" { return !FileManager.default.isExecutableFile(atPath: pytestVenv + "/pytest") }
            return !path.contains { FileManager.default.isExecutableFile(atPath: "\($0)/\(name)") }
        }
    }

    /// The named tables (not paths) a script makes or uses.
    static func namedTables(_ script: String) -> Set<String> {
        Set(script.matches(of: #/(?:--table[ =]|ASPECTS_TABLE=)(?<name>[A-Za-z0-9_][A-Za-z0-9_.-]*)/#).map { String($0.output.name) })
    }

    static var examples: [Block] { blocks.filter(\.isExample) }

    /// A fresh directory laid out as the repository's root is for the reader.
    static func workspace() throws -> String {
        let dir = NSTemporaryDirectory() + "aspects-doc-\(UUID().uuidString)"
        let fm = FileManager.default
        try fm.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try fm.copyItem(atPath: Paths.root + "/config", toPath: dir + "/config")
        for linked in ["Sources", "Tests", "python"] {
            try fm.createSymbolicLink(atPath: dir + "/" + linked, withDestinationPath: Paths.root + "/" + linked)
        }
        return dir
    }

    /// A `swift example` block is test code: it stands verbatim in DocSwiftExamplesTests.swift,
    /// where it compiles and runs with the suite.
    @Test(.tags(.fast)) func everySwiftExampleIsATestHere() throws {
        let tests = try String(contentsOfFile: Paths.root + "/Tests/AspectsTests/Docs/DocSwiftExamplesTests.swift", encoding: .utf8)
        let swift = Self.blocks.filter { $0.isExample && $0.language == "swift" }
        #expect(!swift.isEmpty)
        for b in swift {
            #expect(tests.contains(b.script), "\(b.page):\(b.line): the Swift example is not DocSwiftExamplesTests.swift's code; copy it there")
        }
    }

    @Test(.tags(.realPrograms), arguments: examples.filter { $0.language != "swift" })
    func theExampleDoesWhatThePageSays(_ block: Block) throws {
        let missing = Self.missingPrograms(block.script)
        guard missing.isEmpty else {
            print("doc example \(block.page):\(block.line) skipped: \(missing.joined(separator: ", ")) not installed")
            for program in missing { SkipLedger.shared.note("needs \(program) (doc examples)") }
            return
        }
        // A named table the example creates must not be someone's already (the reader's, or one
        // a killed run left): then the example is skipped, by name, and the table left alone.
        let tables = Self.namedTables(block.script)
        let existing = tables.filter { FileManager.default.fileExists(atPath: "/dev/shm/aspects." + $0) }
        guard existing.isEmpty else {
            print("doc example \(block.page):\(block.line) skipped: table \(existing.joined(separator: ", ")) exists already (aspectctl destroy --table NAME)")
            return
        }
        defer { for t in tables where FileManager.default.fileExists(atPath: "/dev/shm/aspects." + t) { _ = try? Proc.aspectctl(["destroy", "--table", t]) } }
        let expectation = try #require(block.expectation, "\(block.page):\(block.line): \(block.expectError ?? "no expectation")")
        let dir = try Self.workspace()
        defer { TableSegments.removeScratch(dir) }
        try block.script.write(toFile: dir + "/.example.sh", atomically: true, encoding: .utf8)
        // A hung example ends at the timeout (status 124) instead of hanging the suite.
        let r = try Proc.run("/usr/bin/timeout", ["-k", "5", "120", "bash", "-e", ".example.sh"],
                             environment: ["PATH": Self.examplePath, "ASPECTS_PRELOAD": Paths.library, "ASPECTCTL": nil,
                                           "PYTHONDONTWRITEBYTECODE": "1"],
                             directory: dir)
        let place = "\(block.page):\(block.line)"
        #expect(r.status == expectation.status, "\(place): the page claims exit \(expectation.status)\n\(r)")
        func text(_ stream: String) -> String {
            switch stream {
            case "stdout": return r.stdout
            case "stderr": return r.stderr
            case "output": return r.stdout + r.stderr
            default: return (try? String(contentsOfFile: dir + "/" + stream.dropFirst("file ".count), encoding: .utf8)) ?? ""
            }
        }
        for (stream, wanted) in expectation.contains {
            #expect(text(stream).contains(wanted), "\(place): the page claims \(stream) contains \"\(wanted)\"\n\(r)")
        }
        for (stream, unwanted) in expectation.lacks {
            #expect(!text(stream).contains(unwanted), "\(place): the page claims \(stream) lacks \"\(unwanted)\"\n\(r)")
        }
    }

    /// Every command block is either run or says why not; every comment after an example reads.
    @Test(.tags(.realPrograms)) func everyCommandBlockIsRunOrSaysWhyNot() {
        let commandBlocks = Self.blocks.filter { Self.commandLanguages.contains($0.language) }
        for b in commandBlocks where !b.isExample && b.notRunReason == nil {
            Issue.record("\(b.page):\(b.line): a \(b.language) block that is neither `\(b.language) example` nor followed by <!-- not run: reason -->")
        }
        for b in Self.blocks where b.expectError != nil {
            Issue.record("\(b.page):\(b.line): \(b.expectError!)")
        }
        for b in Self.blocks where b.isExample && !Self.commandLanguages.contains(b.language) && b.language != "swift" {
            Issue.record("\(b.page):\(b.line): an example must be sh, console or swift, not \(b.language)")
        }
        let run = commandBlocks.filter(\.isExample)
        let skipped = run.filter { !Self.missingPrograms($0.script).isEmpty }
        print("doc examples: \(run.count) run (\(skipped.count) of them skipped for a missing program), \(commandBlocks.count - run.count) not run:")
        for b in commandBlocks where !b.isExample { print("  not run \(b.page):\(b.line): \(b.notRunReason ?? "")") }
        #expect(run.count >= 20, "only \(run.count) examples are run")
    }

    /// The anchors GitHub gives a page's headings: lower case, spaces as dashes, other
    /// punctuation dropped.
    static func anchors(_ text: String) -> Set<String> {
        Set(text.split(separator: "\n").filter { $0.hasPrefix("#") }.map { heading in
            let title = heading.drop { $0 == "#" }.trimmingCharacters(in: .whitespaces).lowercased()
            return String(title.compactMap { c -> Character? in
                c == " " ? "-" : (c.isLetter || c.isNumber || c == "-" || c == "_") ? c : nil
            })
        })
    }

    /// The reading of a page: a transcript's commands (continued lines and a here-document
    /// included, output left out), the expectation's clauses, and a missing program named.
    @Test(.tags(.realPrograms)) func theConventionIsReadAsDocumented() throws {
        let page = """
            ```console example
            $ cat > t.txt <<'EOF'
            $ not a command
            EOF
            $ grep -c \\
                command t.txt
            1
            ```
            <!-- expect: exit 3, stdout contains "a \\"b\\"\\nc", file t.txt lacks "x" -->
            ```sh
            make
            ```
            <!-- not run: illustrative -->
            """
        let blocks = Self.parse(page: "p.md", text: page)
        #expect(blocks.count == 2)
        #expect(blocks[0].script == "cat > t.txt <<'EOF'\n$ not a command\nEOF\ngrep -c \\\n    command t.txt")
        let e = try #require(blocks[0].expectation)
        #expect(e.status == 3 && e.contains.map(\.text) == ["a \"b\"\nc"] && e.lacks.map(\.stream) == ["file t.txt"])
        #expect(blocks[1].notRunReason == "illustrative" && !blocks[1].isExample)
        #expect(throws: ExpectationError.self) { try Self.parseExpectation("exit 1, stdout has \"x\"") }
        #expect(Self.missingPrograms("aspects-no-such-tool --help | cat", among: ["aspects-no-such-tool", "cat"]) == ["aspects-no-such-tool"])
        #expect(Self.missingPrograms("advice-aspects-no-such-tool", among: ["aspects-no-such-tool"]).isEmpty, "a word, not a part of one")
    }

    /// The README's map names every page of docs/, and every relative link of every page
    /// resolves.
    @Test(.tags(.fast)) func everyPageIsMappedAndEveryLinkResolves() throws {
        let readme = try String(contentsOfFile: Paths.root + "/README.md", encoding: .utf8)
        for page in Self.pages where page.hasPrefix("docs/") {
            #expect(readme.contains("](\(page))"), "the README's map of the docs does not link \(page)")
        }
        for page in Self.pages {
            let text = try String(contentsOfFile: Paths.root + "/" + page, encoding: .utf8)
            let base = (page as NSString).deletingLastPathComponent
            for m in text.matches(of: #/\]\((?<target>[^)#: ]+)(?:#(?<anchor>[^)]*))?\)/#) {
                let target = String(m.output.target)
                let resolved = ((Paths.root + "/" + base) as NSString).appendingPathComponent(target)
                #expect(FileManager.default.fileExists(atPath: resolved), "\(page) links \(target), which does not exist")
                if let anchor = m.output.anchor, let linked = try? String(contentsOfFile: resolved, encoding: .utf8) {
                    #expect(Self.anchors(linked).contains(String(anchor)), "\(page) links \(target)#\(anchor), a heading that page does not have")
                }
            }
        }
    }
}
