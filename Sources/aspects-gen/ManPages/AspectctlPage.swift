/// aspectctl(1): its commands and options from aspectctl's own command tree (`aspectctl
/// --experimental-dump-help`), in the hand-written frame of docs/man/aspectctl.1.in (description,
/// environment, exit status, examples).
struct AspectctlPage {
    var tool: CommandInfo
    var version: String

    /// The generated parts, by marker name.
    func parts() -> [String: [String]] {
        let commands = Self.named((tool.subcommands ?? []).filter(\.shown))
        return [
            "VERSION": [".Os aspects " + version],
            "NAME": [".Nm " + tool.commandName, ".Nd " + Mdoc.text(Self.oneLine(tool.abstract ?? ""))],
            "SYNOPSIS": synopsis(commands),
            "OVERVIEW": Mdoc.prose(tool.discussion ?? ""),
            "COMMANDS": commands.flatMap(section),
            "COMMON-OPTIONS": optionList((tool.arguments ?? []).filter { $0.shown && $0.isBuiltIn }),
        ]
    }

    /// The commands with their names as typed, each one's subcommands after it (`explore merge`).
    static func named(_ commands: [CommandInfo]) -> [(name: String, command: CommandInfo)] {
        commands.flatMap { c in
            [(c.commandName, c)] + named((c.subcommands ?? []).filter(\.shown)).map { (c.commandName + " " + $0.name, $0.command) }
        }
    }

    /// `.Nd` is a phrase: no capital, no full stop.
    static func oneLine(_ abstract: String) -> String {
        var s = abstract.hasSuffix(".") ? String(abstract.dropLast()) : abstract
        if let first = s.first { s = first.lowercased() + s.dropFirst() }
        return s
    }

    private func synopsis(_ commands: [(name: String, command: CommandInfo)]) -> [String] {
        var out = [".Nm", ".Fl -version", ".Nm", ".Ar command", ".Op Fl -help"]
        for c in commands {
            out += [".Nm", ".Cm " + c.name] + usage(ownArguments(c.command))
        }
        return out
    }

    /// A command's arguments other than --help and --version (listed once, for all).
    private func ownArguments(_ c: CommandInfo) -> [ArgumentInfo] {
        (c.arguments ?? []).filter { $0.shown && !$0.isBuiltIn }
    }

    /// The synopsis of one command: options first, then the positional arguments.
    private func usage(_ arguments: [ArgumentInfo]) -> [String] {
        let options = arguments.filter { !$0.isPositional }.map { a in ".Op " + spelling(a, allNames: false) }
        let positionals = arguments.filter(\.isPositional).map { a -> String in
            let word = spelling(a, allNames: false)
            return a.isOptional && !a.takesTheRest ? ".Op " + word : "." + word
        }
        return options + positionals
    }

    /// `Fl -name Ar value` (all of an option's names in the list, the first in the synopsis),
    /// `Ar file ...` for a positional, `Fl - Ar command ...` for what follows `--`.
    private func spelling(_ a: ArgumentInfo, allNames: Bool) -> String {
        let value = Mdoc.arg(a.valueName ?? "value")
        if a.isPositional {
            let word = "Ar " + value + (a.isRepeating ? " ..." : "")
            return a.takesTheRest ? "Fl - " + word : word
        }
        let names = (a.names ?? []).sorted { ($0.kind == "long" ? 0 : 1) < ($1.kind == "long" ? 0 : 1) }
        let shown = allNames ? names : Array(names.prefix(1))
        let flags = shown.map { "Fl " + Self.flagWord($0) }.joined(separator: " , ")
        return a.kind == "option" ? flags + " Ar " + value : flags
    }

    /// What follows `Fl`, which writes one dash itself.
    static func flagWord(_ n: ArgumentInfo.Name) -> String {
        n.kind == "long" ? "-" + n.name : n.name
    }

    private func section(_ named: (name: String, command: CommandInfo)) -> [String] {
        let c = named.command
        var out = [".Ss " + named.name]
        out += Mdoc.prose(c.abstract ?? "")
        if let d = c.discussion, !d.isEmpty { out.append(".Pp"); out += Mdoc.prose(d) }
        let arguments = ownArguments(c)
        if !arguments.isEmpty { out += optionList(arguments) }
        return out
    }

    private func optionList(_ arguments: [ArgumentInfo]) -> [String] {
        var out = [".Bl -tag -width Ds"]
        for a in arguments {
            out.append(".It " + spelling(a, allNames: true))
            var body = Mdoc.prose(a.abstract ?? "")
            if let d = a.discussion, !d.isEmpty { body.append(".Pp"); body += Mdoc.prose(d) }
            if let values = a.allValues, !values.isEmpty { body.append(Mdoc.text("One of: " + values.joined(separator: ", ") + ".")) }
            // most help texts say so already
            if a.isRepeating && !a.isPositional && !(a.abstract ?? "").lowercased().contains("repeatable") { body.append("Repeatable.") }
            if let d = a.defaultValue, !d.isEmpty { body.append(Mdoc.text("Default: " + d + ".")) }
            out += body.isEmpty ? ["\\&"] : body
        }
        out.append(".El")
        return out
    }
}
