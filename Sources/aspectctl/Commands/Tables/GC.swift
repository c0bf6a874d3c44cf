import ArgumentParser
import AspectsTable
import Foundation

struct GC: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gc",
        abstract: "Remove the tables `run` left behind: its process and every attached one gone.",
        discussion: """
        A `run` that was killed (SIGKILL) cannot remove its private table. gc removes such tables: named run-PID-…, whose run is gone and whose attached processes have all exited. With --all, also your named tables that no running process has attached. Also the memory of your tables whose file was deleted without `destroy` (a test's temporary directory removed with the table in it): nothing attached, no table file at that path any more, looked at in the mount namespace it was made in (a PATTERN matches the path or the file's name); one whose namespace has no process left is kept, and said. Without a PATTERN, also the shared memory segments of tables whose `create` was killed before the table had a name (yours, never named, nothing attached, their creator gone).
        """)

    @Flag(name: .long, help: "Also remove named tables that no running process has attached.")
    var all = false

    @Flag(name: .customLong("dry-run"), help: "Say what would be removed; remove nothing.")
    var dryRun = false

    @Argument(help: ArgumentHelp("Only tables whose name matches this glob (e.g. 'ci-*').", valueName: "pattern"))
    var pattern: String?

    func run() throws {
        var failed = false
        /// Says what would go (--dry-run) or removes it and says so.
        func take(_ what: String, _ remove: () throws -> Void) {
            if dryRun { print("would remove \(what)"); return }
            do {
                try remove()
                print("removed \(what)")
            } catch {
                Console.write("aspectctl: cannot remove \(what): \(error)\n")
                failed = true
            }
        }
        for e in TableInventory.scan().entries where pattern.map({ fnmatch($0, e.name.name, 0) == 0 }) ?? true {
            let unused = e.running == 0 && e.problem == nil
            guard e.isLeftOver || (all && unused && e.runPID == nil) else { continue }
            take("\(e.name) (\(Tables.size(e.bytes)), last use \(Tables.ago(e.lastUse)))") { try AdviceTable.destroy(e.name) }
        }
        // a table whose file was deleted: a PATTERN matches its path or its file's name
        for orphan in AnchorRegistry.orphans() where pattern.map({ GCPattern.matches($0, anchor: orphan.anchor) }) ?? true {
            take("the table of \(orphan.anchor) (\(Tables.size(orphan.bytes)), shmid \(orphan.shmid)), whose file was deleted without destroy") { try orphan.remove() }
        }
        Tables.noteUncheckable()
        if let problem = AnchorRegistry.problem() { Console.write("aspectctl: warning: \(problem)\n") }
        if !dryRun { AnchorRegistry.prune() }
        // a segment a killed create left has no name a PATTERN could match
        if pattern == nil {
            for segment in LeftoverSegment.scan() {
                take("the segment \(segment.shmid) (\(Tables.size(segment.bytes))) a killed create (pid \(segment.creatorPID)) left") { try segment.remove() }
            }
        }
        if failed { throw ExitCode(1) }
    }
}
