import ArgumentParser
import AspectsCore
import AspectsRules

@main
struct AspectCtl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "aspectctl",
        abstract: "Advise the C functions of unmodified programs: before, instead of or after them.",
        discussion: """
        Rules go into an advice table (POSIX shared memory) that libaspects.so, loaded with LD_PRELOAD, reads on every call of an advised function. `run` does it all for one command; `create`/`add`/`remove` change the advice of programs that are running.
        """,
        version: "0.1.0",
        groupedSubcommands: [
            CommandGroup(name: "Program", subcommands: [Run.self, Calls.self, PreflightCommand.self]),
            CommandGroup(name: "Rule", subcommands: [Check.self, CatalogCommand.self]),
            CommandGroup(name: "Table", subcommands: [Create.self, Destroy.self, Add.self, Remove.self, List.self, Events.self,
                                                       Stats.self, Tables.self, GC.self]),
            CommandGroup(name: "Exploration", subcommands: [Explore.self]),
        ]
    )

    /// The argument parser's own main, but for the statuses of two usage errors: one of `run`
    /// exits Run.ownFailure (no status of the command it runs can be taken for it; 64 is
    /// EX_USAGE of every sysexits program), and a misspelled command is said with the nearest
    /// names, not as arguments nobody expected.
    static func main() {
        Console.prepare()
        let arguments = Array(CommandLine.arguments.dropFirst())
        var command: ParsableCommand
        do {
            command = try parseAsRoot(arguments)
        } catch {
            if let unknown = unknownCommand(arguments.first) { exit(withError: unknown) }
            if arguments.first == Run.name && exitCode(for: error) == .validationFailure {
                Console.write(fullMessage(for: error) + "\n")
                exit(withError: ExitCode(Run.ownFailure))
            }
            exit(withError: error)
        }
        do {
            try command.run()
        } catch {
            exit(withError: error)
        }
    }

    /// The error for a first word that is no option and names no command (nor `help`).
    static func unknownCommand(_ first: String?) -> ValidationError? {
        guard let first, !first.hasPrefix("-") else { return nil }
        let names = configuration.subcommands.compactMap { $0.configuration.commandName } + ["help"]
        guard !names.contains(first) else { return nil }
        let near = ErrorNames.suggestions(for: first, in: names)
        return ValidationError("\(first): not a command of aspectctl; " + (near.isEmpty ? "aspectctl --help lists them" : "did you mean \(near.joined(separator: " or "))?"))
    }
}
