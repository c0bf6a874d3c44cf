import Foundation
import Testing

/// What a test needs of the machine (a tool, a package, root), as a condition trait that also
/// keeps a ledger: a bare `swift test` on a machine without `.ci/run`'s packages skips those
/// tests, and the run then ends with one line per missing requirement and how many tests it
/// skipped — after the runner's own summary, which counts a skipped test as passed.
extension Trait where Self == ConditionTrait {
    /// Runs the test or suite only when `condition` holds; otherwise skips it for `reason`
    /// (which names the requirement and who installs it) and notes the skip.
    static func requires(_ condition: @autoclosure @escaping @Sendable () -> Bool, _ reason: Comment) -> Self {
        .enabled(reason) {
            let met = condition()
            if !met { SkipLedger.shared.note(reason.rawValue) }
            return met
        }
    }
}

/// The skips of this run, printed at exit (stderr, one line per reason).
final class SkipLedger: @unchecked Sendable {
    static let shared = SkipLedger(reportsAtExit: true)
    private let lock = NSLock()
    private var counts: [String: Int] = [:]
    private var registered: Bool

    /// A ledger that prints itself when the process exits, or (a test's own) never.
    init(reportsAtExit: Bool = false) { registered = !reportsAtExit }

    func note(_ reason: String) {
        lock.lock()
        defer { lock.unlock() }
        counts[reason, default: 0] += 1
        if !registered {
            registered = true
            atexit { SkipLedger.shared.report() }
        }
    }

    /// The ledger as the run's last lines.
    func lines() -> [String] {
        lock.lock()
        defer { lock.unlock() }
        let total = counts.values.reduce(0, +)
        guard total > 0 else { return [] }
        return ["\(total) skipped (tests, suites or doc examples not run; the runner's count above includes them):"]
            + counts.sorted { $0.key < $1.key }.map { "  skipped \($0.value): \($0.key)" }
    }

    private func report() {
        let text = lines().joined(separator: "\n")
        guard !text.isEmpty else { return }
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }
}
