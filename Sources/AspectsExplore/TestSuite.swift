import Foundation
import AspectsCore

/// One test of a suite: a command explored as its own campaign (`SuiteCampaign`).
package struct SuiteTest: Sendable, Equatable {
    /// How reports name it: the line of the list, a pytest id, a ctest name.
    package var name: String
    package var argv: [String]
    /// The directory its runs start in (ctest's WORKING_DIRECTORY); nil: a fresh one per run.
    package var directory: String?

    package init(name: String, argv: [String], directory: String? = nil) {
        (self.name, self.argv, self.directory) = (name, argv, directory)
    }
}

/// The tests of a suite, from a list (`--tests FILE`, `--tests-from CMD`), pytest's collection
/// or ctest's JSON. A list has one test command per line, split into words as a POSIX shell
/// splits them (quotes and backslashes honoured) and run without a shell: no variables, globs
/// or pipes (write `sh -c '…'` for those). `#` starts a comment line; blank lines are skipped.
package enum TestSuite {
    /// The tests of a list; `source` names it in errors.
    package static func parse(_ text: String, source: String) throws(AspectsError) -> [SuiteTest] {
        var tests: [SuiteTest] = []
        for (n, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            let words = try words(of: line, at: "\(source):\(n + 1)")
            tests.append(SuiteTest(name: line, argv: words))
        }
        guard !tests.isEmpty else {
            throw AspectsError(
                .invalidValue, location: source, "the list holds no test command",
                fix: "write one test command per line (# starts a comment)")
        }
        return tests
    }

    /// A line's words as a POSIX shell splits them: blanks separate; '…' keeps everything;
    /// "…" keeps everything but \" \\ \$ \`; a backslash outside quotes keeps the next character;
    /// `#` at a word's start begins a comment.
    package static func words(of line: String, at location: String) throws(AspectsError) -> [String] {
        var words: [String] = []
        var word = ""
        var inWord = false
        var chars = Array(line)[...]
        while let c = chars.popFirst() {
            switch c {
            case " ", "\t":
                if inWord { words.append(word) }
                (word, inWord) = ("", false)
            case "'":
                inWord = true
                guard let end = chars.firstIndex(of: "'") else { throw unclosed("'", location) }
                word += String(chars[chars.startIndex..<end])
                chars = chars[(end + 1)...]
            case "\"":
                inWord = true
                var closed = false
                while let d = chars.popFirst() {
                    if d == "\"" {
                        closed = true
                        break
                    }
                    if d == "\\", let e = chars.first, "\"\\$`".contains(e) {
                        word.append(chars.removeFirst())
                    } else {
                        word.append(d)
                    }
                }
                if !closed { throw unclosed("\"", location) }
            case "#" where !inWord:
                // a comment, as a shell reads one: from a word's start to the line's end
                chars = chars[chars.endIndex...]
            case "\\":
                inWord = true
                if let e = chars.popFirst() { word.append(e) }
            default:
                inWord = true
                word.append(c)
            }
        }
        if inWord { words.append(word) }
        return words
    }

    static func unclosed(_ quote: Character, _ location: String) -> AspectsError {
        AspectsError(
            .invalidValue, location: location, "a \(quote) quote is not closed",
            fix: "close the quote on the same line: each line is one test command")
    }

    // MARK: - pytest

    /// Whether `command` lists pytest's tests: a pytest run with --collect-only (or --co).
    package static func isPytestCollection(_ command: [String]) -> Bool {
        command.contains { $0 == "--collect-only" || $0 == "--co" } && command.contains { $0.contains("pytest") }
    }

    /// The tests of pytest's `--collect-only -q` output: each test id (`path::name`) run as
    /// the collecting command without its collection options, `-q ID`. pytest's summary
    /// (`3 tests collected in 0.01s`), warnings and blank lines are not tests. The cache
    /// plugin is turned off: a cache the runs share would make them depend on each other.
    package static func pytest(collected output: String, command: [String], source: String) throws(AspectsError) -> [SuiteTest] {
        // the collecting command without its collection options and the paths it collected
        let collectionOnly: Set<String> = ["--collect-only", "--co", "-q", "--quiet"]
        let pytestAt = command.firstIndex { $0.contains("pytest") } ?? 0
        let base =
            command[...pytestAt]
            + command[(pytestAt + 1)...].filter { w in
                !collectionOnly.contains(w) && (w.hasPrefix("-") || !(w.contains("::") || FileManager.default.fileExists(atPath: w)))
            }
        let roots = pytestRoots(command)
        var tests: [SuiteTest] = []
        for raw in output.split(separator: "\n") {
            let id = raw.trimmingCharacters(in: .whitespaces)
            // a test id names its file, then the test: `tests/test_x.py::test_y[param]`
            guard let sep = id.range(of: "::"), !id[..<sep.lowerBound].contains(" ") else { continue }
            let file = String(id[..<sep.lowerBound])
            // Each run starts in a fresh directory: the id is made absolute. pytest names the
            // file from its rootdir, which its -q output does not say: the first directory of
            // here and the paths collected (and their parents) that holds the file is it.
            guard let root = file.hasPrefix("/") ? "" : roots.first(where: { FileManager.default.fileExists(atPath: $0 + "/" + file) })
            else {
                throw AspectsError(
                    .invalidValue, location: source,
                    "pytest collected \(id), whose file is in none of \(roots.prefix(4).joined(separator: ", "))",
                    fix: "collect from the project's directory, or name the test files by absolute paths")
            }
            tests.append(SuiteTest(name: id, argv: Array(base) + ["-q", "-p", "no:cacheprovider", (root.isEmpty ? "" : root + "/") + id]))
        }
        guard !tests.isEmpty else {
            throw AspectsError(
                .invalidValue, location: source, "pytest collected no test (its output: \(output.suffix(300)))",
                fix: "give a collection that lists tests: pytest --collect-only -q [PATH]")
        }
        return tests
    }

    /// Where pytest's rootdir may be: here, then each path the collection names and its parents.
    static func pytestRoots(_ command: [String]) -> [String] {
        let cwd = FileManager.default.currentDirectoryPath
        var roots = [cwd]
        for word in command.dropFirst() where !word.hasPrefix("-") {
            let path = word.split(separator: "::").first.map(String.init) ?? word
            var dir = URL(fileURLWithPath: path.hasPrefix("/") ? path : cwd + "/" + path).standardizedFileURL
            guard FileManager.default.fileExists(atPath: dir.path) else { continue }
            while dir.path != "/" {
                if !roots.contains(dir.path) { roots.append(dir.path) }
                dir.deleteLastPathComponent()
            }
        }
        return roots
    }

    // MARK: - ctest

    /// The tests of `ctest --show-only=json-v1`: each test's command and WORKING_DIRECTORY (ctest
    /// gives the build directory when the test names none): its runs start there, as ctest runs
    /// it. A disabled test is left out.
    package static func ctest(json text: String, source: String) throws(AspectsError) -> [SuiteTest] {
        let root: JSONNode
        do { root = try JSONParser.parse(text) } catch {
            throw AspectsError(
                .malformedJSON, location: source, "not JSON (\(error))",
                fix: "give a build directory where `ctest --show-only=json-v1` works")
        }
        guard case .array(let items)? = root["tests"]?.value else {
            throw AspectsError(
                .invalidValue, field: "tests", location: source, "ctest's JSON has no tests list",
                fix: "give a CMake build directory with tests (enable_testing() and add_test())")
        }
        var tests: [SuiteTest] = []
        for (k, t) in items.enumerated() {
            guard case .string(let name)? = t["name"]?.value else { continue }
            guard case .array(let words)? = t["command"]?.value, !words.isEmpty else {
                throw AspectsError(
                    .invalidValue, field: "tests[\(k)].command", location: source, "test \(name) has no command",
                    fix: "give it one with add_test(NAME name COMMAND ...)")
            }
            let argv = words.compactMap { w -> String? in
                if case .string(let s) = w.value { return s }
                return nil
            }
            var directory: String?
            var disabled = false
            if case .array(let properties)? = t["properties"]?.value {
                for p in properties {
                    guard case .string(let key)? = p["name"]?.value else { continue }
                    if key == "WORKING_DIRECTORY", case .string(let d)? = p["value"]?.value { directory = d }
                    if key == "DISABLED", p["value"]?.value == .bool(true) { disabled = true }
                }
            }
            if !disabled { tests.append(SuiteTest(name: name, argv: argv, directory: directory)) }
        }
        guard !tests.isEmpty else {
            throw AspectsError(
                .invalidValue, location: source, "ctest lists no test", fix: "give a CMake build directory with tests (add_test())")
        }
        return tests
    }
}
