import AspectConfig
import ArgumentParser
import Foundation

/// `--lock-timeout`, on every command that can write a table: how long a writer waits for the
/// table's lock while another process holds it (TableLock), before exit 75.
struct LockOptions: ParsableArguments {
    @Option(name: .customLong("lock-timeout"), help: ArgumentHelp("Seconds to wait for a table another writer has locked (who holds it is said on stderr); 0 fails at once. Then exit 75.", valueName: "seconds"))
    var lockTimeout: Double = TableLock.timeout

    func validate() throws {
        guard lockTimeout >= 0, lockTimeout <= 86_400 else { throw ValidationError("--lock-timeout takes 0 to 86400 seconds, not \(lockTimeout)") }
    }

    /// Makes it the policy of every table this process writes.
    func apply() {
        TableLock.timeout = lockTimeout
        TableLock.onWait = { Console.write("aspectctl: " + $0 + "\n") }
    }
}

/// `--table`, on every command that works on a table.
struct TableOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The advice table (default: $ASPECTS_TABLE).", valueName: "name"))
    var table: String?

    @OptionGroup var lock: LockOptions

    /// The table named, and the lock policy for writing it.
    func tableName() throws(AspectsError) -> TableName {
        lock.apply()
        guard let name = table ?? ProcessInfo.processInfo.environment["ASPECTS_TABLE"], !name.isEmpty else {
            throw AspectsError(.usage, field: "--table", "no table given", fix: "pass --table NAME or set ASPECTS_TABLE")
        }
        return try TableName(name)
    }

    func open() throws(AspectsError) -> AdviceTable { try AdviceTable.open(try tableName()) }
}

/// `--json`, on every command that prints data.
struct OutputOptions: ParsableArguments {
    @Flag(name: .long, help: "Print JSON instead of text.")
    var json = false
}

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


/// Runs a command body, turning an AspectsError into a message and a sysexits status.
func guarded(_ body: () throws -> Void) throws {
    do {
        try body()
    } catch let e as AspectsError {
        Console.write("aspectctl: error: \(e)\n")
        throw ExitCode(e.exitStatus)
    }
}

extension AspectsError {
    /// sysexits(3)-style exit status of the CLI.
    var exitStatus: Int32 {
        switch code {
        case .usage, .badTableName: return 64              // EX_USAGE
        case .noTable, .noInput: return 66                  // EX_NOINPUT
        case .tableExists: return 73                        // EX_CANTCREAT
        case .output: return 74                             // EX_IOERR
        case .tableFull, .groupFull, .tableBusy: return 75  // EX_TEMPFAIL
        case .system: return 71                             // EX_OSERR
        default: return 65                                  // EX_DATAERR: bad rules, bad table contents
        }
    }
}

func printJSON(_ value: JSONNode.Value, pretty: Bool = true) { print(value.rendered(pretty: pretty)) }

/// `run` and `explore`: their own options, then the command to run and its arguments. The
/// argument parser reads options up to `--` or up to the first word that is not one of them
/// and captures every word from there (`.captureForPassthrough`), untouched: `run --inject T
/// prog --help` gives `--help` to prog. The first captured word must then be the command's
/// name (or `--`): an option this command does not have is a usage error, never a program.
protocol RunsACommand: ParsableCommand {
    /// Every word from the command on, as captured: `--` first when it was given.
    var command: [String] { get }
}

extension RunsACommand {
    /// The command and its arguments.
    var argv: [String] { command.first == "--" ? Array(command.dropFirst()) : command }

    /// Called from validate(): there is a command, and what stands in its place before any
    /// `--` is no option: `--help` asks for help, anything else dash-led is unknown here.
    func validateCommandWords() throws {
        let name = Self._commandName
        if let first = command.first, first != "--" {
            if first == "--help" || first == "-h" { throw CleanExit.helpRequest(self) }
            if Self.isOptionWord(first) { throw ValidationError(Self.unknownOption(first)) }
        }
        if argv.isEmpty { throw ValidationError("give the command to \(name), after its options or after --: aspectctl \(name) [<options>] -- <command> [<argument> ...]") }
    }

    /// Dash-led, and more than a lone `-` (which names standard input to many programs).
    static func isOptionWord(_ word: String) -> Bool { word.hasPrefix("-") && word.count > 1 }

    /// The message for an option this command does not have: the nearest ones it has.
    static func unknownOption(_ word: String) -> String {
        let name = String(word.prefix { $0 != "=" })
        let near = name.hasPrefix("--") || name.count > 2 ? ErrorNames.suggestions(for: "--" + name.drop { $0 == "-" }, in: longOptionNames()) : []
        let hint = near.isEmpty ? "aspectctl \(_commandName) --help lists them." : "did you mean \(near.joined(separator: " or "))?"
        return "\(name): not an option of \(_commandName); \(hint) Options go before the command; a command whose name starts with - goes after --"
    }

    /// The long options this command declares, as the argument parser describes them: read
    /// from its declarations, so that no second list of them can fall behind.
    static func longOptionNames() -> [String] {
        guard let doc = try? JSONSerialization.jsonObject(with: Data(_dumpHelp().utf8)) as? [String: Any],
              let arguments = (doc["command"] as? [String: Any])?["arguments"] as? [[String: Any]] else { return [] }
        return arguments.flatMap { argument in
            (argument["names"] as? [[String: Any]] ?? []).filter { $0["kind"] as? String == "long" }.compactMap { ($0["name"] as? String).map { "--" + $0 } }
        }
    }
}
