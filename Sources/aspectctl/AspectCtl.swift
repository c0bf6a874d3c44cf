import ArgumentParser

@main
struct AspectCtl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "aspectctl",
        abstract: "Advise the C functions of unmodified programs: before, instead of or after them.",
        discussion: """
        Rules go into an advice table (POSIX shared memory) that libaspects.so, loaded with
        LD_PRELOAD, reads on every call of an advised function. `run` does it all for one
        command; `create`/`add`/`remove` change the advice of programs that are running.
        """,
        version: "0.1.0",
        subcommands: [Run.self, Create.self, Destroy.self, Add.self, Remove.self, List.self, Events.self,
                      Stats.self, Check.self, CatalogCommand.self, PreflightCommand.self, Explore.self, Tables.self, GC.self]
    )
}
