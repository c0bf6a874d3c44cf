import ArgumentParser
import AspectsCore
import AspectsRules
import Foundation

/// Rules from files and from the command line, decoded and compiled (validated) as one batch.
struct RuleSources: ParsableArguments {
    @Option(name: .customLong("rules"), help: ArgumentHelp("A rules file (JSON; - for standard input, pipes and FIFOs too); repeatable.", valueName: "file"))
    var files: [String] = []

    @Option(name: .customLong("rule"), help: ArgumentHelp("One rule as JSON; repeatable.", valueName: "json"))
    var inline: [String] = []

    @Option(name: .customLong("inject"), help: ArgumentHelp("One rule in strace's inject syntax, e.g. 'write:error=ENOSPC:when=3' or 'open(*.db):error=EACCES:when=1'; repeatable (docs/inject.md: the table of equivalences).", valueName: "term"))
    var injects: [String] = []

    /// The inject terms, each checked as a rule: an error points at the term's column.
    func injectTerms() -> [InjectTerm] {
        injects.enumerated().map { i, term in InjectTerm(term, source: injects.count == 1 ? "--inject" : "--inject #\(i + 1)") }
    }

    func load(extraFiles: [String] = []) throws(AspectsError) -> [CompiledRule] {
        var rules: [Rule] = []
        for path in extraFiles + files {
            // Files, FIFOs, /dev/stdin, <(...) and "-" alike (RulesFile).
            let text = try RulesFile.read(path)
            let d = try RuleDecoder(source: path == "-" ? "<stdin>" : path, baseDirectory: Self.directory(of: path)).decodeDocument(text)
            if let first = d.errors.first { throw first }
            Self.say(d.notes)
            rules += d.rules
        }
        for (i, json) in inline.enumerated() {
            let d = try RuleDecoder(source: inline.count == 1 ? "--rule" : "--rule #\(i + 1)").decodeDocument(json)
            if let first = d.errors.first { throw first }
            Self.say(d.notes)
            rules += d.rules
        }
        for term in injectTerms() { rules.append(try term.rule()) }
        return try RuleCompiler().compile(rules)
    }

    /// Like load, but goes on past a bad rule or file: every rule that compiles, and every
    /// problem found (a file that cannot be read or is not JSON counts as one).
    func loadEach(extraFiles: [String] = []) -> (compiled: [CompiledRule], errors: [AspectsError]) {
        var rules: [Rule] = []
        var positions: [Int] = []
        var errors: [AspectsError] = []
        var texts: [(String, String?, () throws(AspectsError) -> String)] = (extraFiles + files).map { path in
            (path == "-" ? "<stdin>" : path, Self.directory(of: path), { () throws(AspectsError) -> String in try RulesFile.read(path) })
        }
        for (i, json) in inline.enumerated() {
            texts.append((inline.count == 1 ? "--rule" : "--rule #\(i + 1)", nil, { () throws(AspectsError) -> String in json }))
        }
        for (source, directory, read) in texts {
            do {
                let d = try RuleDecoder(source: source, baseDirectory: directory).decodeDocument(try read())
                let (decoded, places, bad) = (d.rules, d.positions, d.errors)
                Self.say(d.notes)
                rules += decoded
                // places count within each source; with several sources, across them
                positions += places.map { positions.count + $0 }
                errors += bad
            } catch {
                errors.append(error)
            }
        }
        for term in injectTerms() {
            do {
                rules.append(try term.rule())
                positions.append(positions.count + 1)
            } catch {
                errors.append(error)
            }
        }
        let (compiled, bad) = RuleCompiler().compileEach(rules, positions: positions)
        return (compiled, errors + bad)
    }

    /// Where a rules file's relative `call` objects are: its directory. Standard input, pipes
    /// and `<(...)` (/dev/fd/N) have none: the current directory, as for --rule.
    static func directory(of path: String) -> String? {
        guard path != "-", !path.hasPrefix("/dev/"), !path.hasPrefix("/proc/") else { return nil }
        let dir = (path as NSString).deletingLastPathComponent
        return dir.isEmpty ? nil : dir
    }

    /// What a rules document left out on purpose (a listing's removed rules), on stderr.
    static func say(_ notes: [String]) {
        for n in notes { Console.write("aspectctl: note: \(n)\n") }
    }

    /// Usage check of commands that need at least one rule.
    func requireSome(_ extraFiles: [String]) throws {
        if extraFiles.isEmpty && files.isEmpty && inline.isEmpty && injects.isEmpty { throw ValidationError("give a rules file, --rule JSON or --inject TERM") }
    }

    static func reason(_ error: Error) -> String {
        let ns = error as NSError
        if let underlying = ns.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32(underlying.code)))
        }
        return ns.code == NSFileReadNoSuchFileError ? "No such file or directory" : ns.localizedDescription
    }
}
