import ArgumentParser
import AspectsCore
import AspectsExplore
import CAspectsABI
import Foundation
#if canImport(Glibc)
import Glibc
#endif

struct Calls: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "calls",
        abstract: "Run a program once and list the catalog functions it really calls: counts, families, call sites, programs.",
        discussion: """
        Runs the command once, as `run` would but with nothing changed: libaspects.so logs every catalog function before it runs (one log-only rule per function). The command runs in the current directory with its standard input /dev/null; its output is kept aside (the end of its stderr is shown when it fails). Then lists the functions it called, most calls first: the calls (every call, in every process of the tree), the function's family (the name a rule's "family" takes to cover every function that does the same work: write, read, sync, open, send, recv), the names it was called by where they differ from the function's (pwrite64 for pwrite), and its top call sites (object+offset, as events and the `site` condition write them, with file:line where the object has debug information). For a command that starts several programs (sh -c 'cat x | gzip'), the calls of each program follow.

        Notes say when nothing was seen (a static program, no process attached) and when the program's output or input goes through stdio (fwrite, fputs, fread ...): the write(2) and read(2) calls behind them happen inside libc, where no preload reaches, so rule on the stdio functions instead. Calls libc makes to itself, and a program's calls to functions it defines, are never seen.

        Exit status: 0 when calls were seen, whatever the command's own status (printed); 1 when nothing was seen; 64 and up as the other commands (66: the program is not found).

          aspectctl calls -- sqlite3 test.db 'create table t(x)'
          aspectctl calls --json -- sh -c 'cat in.txt | gzip > out.gz'
        """)

    @Option(name: .long, help: ArgumentHelp("Functions listed in the table, most calls first (--json lists every one).", valueName: "N"))
    var top = 20

    @Flag(name: .long, help: "List every function called (the table and each program's line).")
    var all = false

    @Option(name: .long, help: ArgumentHelp("Call sites shown per function, most calls first (--json lists every one).", valueName: "N"))
    var sites = 3

    @Option(name: .long, help: ArgumentHelp("Seconds before the command is killed with its process group; the calls until then are listed.", valueName: "seconds"))
    var timeout: Double = 600

    @Option(name: .long, help: ArgumentHelp("Use this libaspects.so (default: next to aspectctl, or $ASPECTS_PRELOAD).", valueName: "path"))
    var preload: String?

    @OptionGroup var output: OutputOptions

    @Argument(parsing: .postTerminator, help: ArgumentHelp("The command and its arguments, after --.", valueName: "command"))
    var command: [String] = []

    func validate() throws {
        if command.isEmpty { throw ValidationError("give the command to run after --: aspectctl calls [options] -- CMD [ARGS...]") }
        if top < 1 { throw ValidationError("--top takes 1 or more (--all lists every function)") }
        if sites < 0 { throw ValidationError("--sites takes 0 or more") }
        if !(timeout > 0) { throw ValidationError("--timeout takes a number of seconds above 0") }
    }

    func run() throws {
        var seenNothing = false
        try guarded {
            let program = try ProgramPath.resolve(command[0])
            let library = try Run.findLibrary(preload)
            if let warning = Run.staticWarning(command[0]) { Console.write("aspectctl: warning: \(warning)\n") }
            let report = try CallsReport.observe(command: command, program: program, library: library, timeout: timeout)
            seenNothing = report.functions.isEmpty
            if output.json {
                printJSON(report.json)
            } else {
                print(report.text(top: all ? nil : top, sites: sites), terminator: "")
            }
        }
        if seenNothing { throw ExitCode(1) }
    }
}
