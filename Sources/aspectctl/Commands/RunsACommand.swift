import ArgumentParser
import AspectsCore
import Foundation

/// `run` and `explore`: their own options, then the command to run and its arguments. The
/// argument parser reads options up to `--` or up to the first word that is not one of them
/// and captures every word from there (`.captureForPassthrough`), untouched: `run --inject T
/// prog --help` gives `--help` to prog. The first captured word must then be the command's
/// name (or `--`): an option this command does not have is a usage error, never a program.
protocol RunsACommand: ParsableCommand {
    /// What follows `aspectctl` to invoke it: `run`, `explore` (whose default it is).
    static var invocation: String { get }

    /// Every word from the command on, as captured: `--` first when it was given.
    var command: [String] { get }
}

extension RunsACommand {
    /// The command and its arguments.
    var argv: [String] { command.first == "--" ? Array(command.dropFirst()) : command }

    /// Called from validate(): there is a command, and what stands in its place before any
    /// `--` is no option: `--help` asks for help, anything else dash-led is unknown here.
    func validateCommandWords() throws {
        let name = Self.invocation
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
        let hint = near.isEmpty ? "aspectctl \(invocation) --help lists them." : "did you mean \(near.joined(separator: " or "))?"
        return "\(name): not an option of \(invocation); \(hint) Options go before the command; a command whose name starts with - goes after --"
    }

    /// The long options this command declares, read from the argument parser's own help (the
    /// OPTIONS list names every option shown, its short name first), so that no second list of
    /// them can fall behind; OptionParsingTests pins that the suggestions come out.
    static func longOptionNames() -> [String] {
        let help = helpMessage(columns: Int.max)
        guard let options = help.range(of: "\nOPTIONS:\n") else { return [] }
        // an option's line starts with its names: `-j <N>`, `--out <dir>`, `-h, --help`
        return help[options.upperBound...].split(separator: "\n").compactMap { line in
            let words = line.split(separator: " ")
            guard words.first?.hasPrefix("-") == true else { return nil }
            return words.prefix(3).map { String($0.hasSuffix(",") ? $0.dropLast() : $0) }.first { $0.hasPrefix("--") && $0.count > 2 }
        }
    }
}
