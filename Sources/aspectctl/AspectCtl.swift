import AspectConfig
import ArgumentParser

@main
struct AspectCtl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "aspectctl",
        abstract: "Advise the C functions of unmodified programs: before, instead of or after them.",
        discussion: """
        Rules go into an advice table (POSIX shared memory) that libaspects.so, loaded with LD_PRELOAD, reads on every call of an advised function. `run` does it all for one command; `create`/`add`/`remove` change the advice of programs that are running.
        """,
        version: "0.1.0",
        subcommands: [Run.self, Create.self, Destroy.self, Add.self, Remove.self, List.self, Events.self,
                      Stats.self, Check.self, CatalogCommand.self, PreflightCommand.self, Calls.self, Explore.self, Tables.self, GC.self]
    )

    /// Parses the arguments (a bare `run --expect-fired` as BareExpectFired says) and runs
    /// the command. A usage error exits with the command's usage status: 64 (EX_USAGE), but
    /// Run.ownFailure for `run`, which no status of the command it runs can be taken for.
    static func main() {
        Console.prepare()
        let args = Array(CommandLine.arguments.dropFirst())
        let isRun = args.first == Run._commandName
        var command: ParsableCommand
        do {
            try checkCommandName(args.first)
            if isRun { BareExpectFired.given = args }
            // explore takes every word from its command on as the command's, a subcommand's
            // name too: `explore merge` is told apart here.
            if args.starts(with: [Explore._commandName, ExploreMerge._commandName]) {
                do { command = try ExploreMerge.parseAsRoot(Array(args.dropFirst(2))) } catch { ExploreMerge.exitParsing(error) }
            } else {
                command = try parseAsRoot(isRun ? BareExpectFired.attached(args) : args)
            }
        } catch {
            if isRun && exitCode(for: error) == .validationFailure {
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

    /// A first word that is no option must name a command (or `help`): a misspelled one is
    /// said with the nearest names, not as arguments nobody expected.
    static func checkCommandName(_ first: String?) throws {
        guard let first, !first.hasPrefix("-") else { return }
        let names = configuration.subcommands.map { $0._commandName } + ["help"]
        guard !names.contains(first) else { return }
        let near = ErrorNames.suggestions(for: first, in: names)
        throw ValidationError("\(first): not a command of aspectctl; " + (near.isEmpty ? "aspectctl --help lists them" : "did you mean \(near.joined(separator: " or "))?"))
    }
}
