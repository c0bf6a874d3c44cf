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

    /// `run --expect-fired` takes an optional value (`--expect-fired`, `--expect-fired=3`),
    /// which the argument parser has no form for: a bare one, before the command's `--`, is
    /// read as `--expect-fired=all`.
    static func main() {
        Console.prepare()
        var args = Array(CommandLine.arguments.dropFirst())
        if args.first == "run" {
            let end = args.firstIndex(of: "--") ?? args.endIndex
            for i in args.indices where i < end && args[i] == "--expect-fired" {
                let next = i + 1 < end ? args[i + 1] : nil
                // a value given apart (`--expect-fired 3`) stays; a flag or the end means bare
                if next == nil || next!.hasPrefix("-") || ExpectFired(next!) == nil { args[i] = "--expect-fired=all" }
            }
        }
        main(args)
    }
}
