#if canImport(Glibc)
import Glibc
#endif
import Foundation
import AspectsCore
import AspectsTable

/// An interrupted campaign (SIGTERM, SIGINT, SIGHUP: Ctrl-C, a CI timeout) leaves nothing
/// running and no table behind. Each run is in a process group of its own, so the terminal's
/// Ctrl-C does not reach it; explore is the subreaper of everything its runs start (setsid
/// daemons too), and on the signal kills every descendant, removes the work tables and exits
/// 128+N. The runs' directories and output files stay for a look.
package enum ExploreInterruption {
    /// From here on a termination signal ends the campaign so. Call before any worker thread
    /// starts: the threads inherit the blocked signals, and one watcher collects them.
    package static func watch(workDirectory: String) {
        TerminationSignals.takeOver()
        ProcessTree.becomeSubreaper()
        work = workDirectory
        // The main thread, seeing its run killed, may reach exit() first: it ends the same way.
        atexit { if ExploreInterruption.ending != 0 { ExploreInterruption.end(ExploreInterruption.work, signal: ExploreInterruption.ending) } }
        let watcher = Thread {
            while true {
                if let received = TerminationSignals.next(within: 3600) {
                    ending = received.signal
                    end(work, signal: received.signal)
                }
            }
        }
        watcher.start()
    }

    package nonisolated(unsafe) static var ending: Int32 = 0

    /// Whether the campaign is being ended by a signal. The watcher sets it before it kills
    /// any run, so a run that ends after it was set may have been killed by the interruption,
    /// not by its fault: its result is no outcome and must not be journaled.
    package static var isEnding: Bool { ending != 0 }
    /// The work directory whose tables an interruption removes: a suite's moves from test to
    /// test (`SuiteCampaign`).
    package nonisolated(unsafe) static var work = ""

    /// What a run that ended during the interruption throws: it was killed by the sweep, not
    /// by its fault, so no outcome of it may be journaled or reported.
    package static var interrupted: AspectsError { AspectsError(.system, "the campaign was interrupted") }

    /// Parks the calling thread while the watcher ends the campaign (it exits the process 128+N):
    /// explore's top level, which must neither report nor exit with another status meanwhile.
    package static func awaitEnd() -> Never {
        while true { sleep(60) }
    }

    /// Kills every descendant until none is left (workers may still be starting runs), removes
    /// the tables in `work`, and exits 128+signal.
    static func end(_ work: String, signal: Int32) -> Never {
        ProcessTree.killDescendants()
        // destroyed, not unlinked: a table's segment outlives its file (AdviceTable.destroy)
        for name in (try? FileManager.default.contentsOfDirectory(atPath: work)) ?? [] where name.hasSuffix(".table") {
            if let table = try? TableName(work + "/" + name) { try? AdviceTable.destroy(table) }
        }
        _exit(128 + signal)
    }
}
