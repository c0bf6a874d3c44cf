#if canImport(Glibc)
import Glibc
#endif

/// SIGTERM, SIGINT and SIGHUP, which ask a command that runs others (`run`, `explore`) to end:
/// taken over so that they never kill it before it has ended what it started and removed its
/// tables. They are blocked in the calling thread and collected with `next`; a handler records
/// one delivered to another thread instead, so no thread dies of one either way.
package enum TerminationSignals {
    package static let numbers: [Int32] = [SIGTERM, SIGINT, SIGHUP]

    /// One that was received: its number, and whether a terminal sent it (Ctrl-C, a hang-up:
    /// the kernel signalled our whole foreground process group) rather than a process.
    package struct Received: Equatable, Sendable {
        package var signal: Int32
        package var fromTerminal: Bool
    }

    nonisolated(unsafe) static var strayed: Int32 = 0
    nonisolated(unsafe) static var strayedFromTerminal: Int32 = 0

    /// Takes them over for the rest of the process's life, and SIGCHLD too (`next` wakes when a
    /// child ends). Programs started afterwards must be given an empty mask and default actions.
    package static func takeOver() {
        var set = blockedSet()
        pthread_sigmask(SIG_BLOCK, &set, nil)
        for n in numbers {
            var action = sigaction()
            action.sa_flags = SA_SIGINFO
            action.__sigaction_handler.sa_sigaction = { sig, info, _ in
                TerminationSignals.strayedFromTerminal = info.map { $0.pointee.si_code == SI_KERNEL ? 1 : 0 } ?? 0
                TerminationSignals.strayed = sig
            }
            sigaction(n, &action, nil)
        }
    }

    static func blockedSet() -> sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        for n in numbers + [SIGCHLD] { sigaddset(&set, n) }
        return set
    }

    /// Waits up to `seconds` for a termination signal or a child's end: the termination signal
    /// when one came, nil on a child's end or the timeout. (The timeout also covers a SIGCHLD
    /// that another thread of the process took.)
    package static func next(within seconds: Double) -> Received? {
        if strayed != 0 {
            defer { strayed = 0 }
            return Received(signal: strayed, fromTerminal: strayedFromTerminal != 0)
        }
        var set = blockedSet()
        var info = siginfo_t()
        var limit = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - Double(Int(seconds))) * 1e9))
        let sig = sigtimedwait(&set, &info, &limit)
        guard sig > 0, numbers.contains(sig) else { return nil }
        return Received(signal: sig, fromTerminal: info.si_code == SI_KERNEL)
    }
}
