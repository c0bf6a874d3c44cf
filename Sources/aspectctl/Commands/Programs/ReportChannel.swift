import AspectsCore
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Where `run` says what it did — the drawn seeds, what was not injected, the report — kept
/// apart from the program's own stderr when asked: `--report-file FILE` (OutputFile: written
/// through the path, never replacing it), `--report-fd N`. Standard error otherwise. A report
/// that cannot be written is run's own failure (125), not something to pass over.
/// The file is checked at once but opened (truncated) only by `begin`, once everything is
/// validated and the command is about to start: a bad rule or option leaves it as it was
/// (issue 30: a bad rule emptied the target). What is said before is kept until then.
final class ReportChannel {
    private var fd: Int32
    private let owned: Bool
    /// The option and the path or descriptor, for errors.
    private let option: String, target: String
    private let file: String?
    private var pending: [String] = []

    init(file: String?, fd given: Int32?) throws(AspectsError) {
        self.file = file
        if let file {
            try OutputFile.check(file, option: "--report-file")
            fd = -1
            (owned, option, target) = (true, "--report-file", file)
        } else if let given {
            let flags = fcntl(given, F_GETFL)
            guard given >= 0, flags >= 0, flags & O_ACCMODE != O_RDONLY else {
                throw AspectsError(.usage, field: "--report-fd", "descriptor \(given) is not open for writing",
                                   fix: "open it in the shell first, e.g. `3>report.txt`")
            }
            // A copy of our own, so that the descriptor itself is left as it is: 1 and 2 stay the
            // command's stdout and stderr. One above 2 is the report's alone: the command does
            // not inherit it.
            let copy = fcntl(given, F_DUPFD_CLOEXEC, 3)
            guard copy >= 0 else {
                throw AspectsError(.system, field: "--report-fd", "cannot duplicate descriptor \(given): \(String(cString: strerror(errno)))")
            }
            if given > 2 { _ = fcntl(given, F_SETFD, fcntl(given, F_GETFD) | FD_CLOEXEC) }
            fd = copy
            (owned, option, target) = (true, "--report-fd", "descriptor \(given)")
        } else {
            fd = 2
            (owned, option, target) = (false, "--report", "standard error")
        }
    }

    deinit { if owned && fd >= 0 { _ = close(fd) } }

    /// Opens the report file (everything is validated: the command is about to start) and
    /// writes what was said so far.
    func begin() throws(AspectsError) {
        if let file, fd < 0 { fd = try OutputFile.open(file, option: "--report-file") }
        let said = pending
        pending = []
        for text in said { try say(text) }
    }

    func say(_ text: String) throws(AspectsError) {
        guard fd >= 0 else { pending.append(text); return }
        if let e = OutputFile.writeAll(fd, Array((text.hasSuffix("\n") ? text : text + "\n").utf8)) {
            throw OutputFile.writeFailure(target, option: option, errno: e)
        }
    }
}
