import ArgumentParser
import AspectsExplore
import CAspectsABI
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A progress line on a terminal's stderr: runs done of planned, findings, elapsed, ETA,
/// redrawn in place. Quiet when stderr is not a terminal (a test's log stays clean), unless
/// asked for (`--progress always`): then one plain line per update, for logs.
final class ProgressBar: @unchecked Sendable {
    let enabled: Bool
    let terminal: Bool
    private let lock = NSLock()
    private var started = Date()
    private var lastDraw = Date.distantPast

    init(enabled: Bool, terminal: Bool) {
        self.enabled = enabled
        self.terminal = terminal
    }

    private func write(_ line: String) {
        Console.write(terminal ? "\r\u{1b}[K" + line : line + "\n")
    }

    func note(_ text: String) {
        guard enabled else { return }
        write(text)
    }

    func start(total: Int) {
        started = Date()
        update(done: 0, total: total, findings: 0)
    }

    func update(done: Int, total: Int, findings: Int) {
        guard enabled else { return }
        lock.withLock {
            let now = Date()
            guard done == 0 || done == total || now.timeIntervalSince(lastDraw) > 0.1 else { return }
            lastDraw = now
            let elapsed = now.timeIntervalSince(started)
            let width = 30, filled = total == 0 ? width : width * done / total
            let eta = done == 0 ? "?" : Self.clock(elapsed / Double(done) * Double(total - done))
            let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
            write("[\(bar)] \(done)/\(total) runs, \(findings) finding(s), \(Self.clock(elapsed)) elapsed, ETA \(eta)")
        }
    }

    func finish() {
        guard enabled, terminal else { return }
        Console.write("\n")
    }

    static func clock(_ t: Double) -> String {
        let s = Int(t.rounded())
        return s >= 3600 ? String(format: "%d:%02d:%02d", s / 3600, s / 60 % 60, s % 60) : String(format: "%d:%02d", s / 60, s % 60)
    }
}

extension ProgressBar {
    /// What a campaign says while it prepares: notes on the bar, warnings on stderr.
    var campaignNotes: CampaignNotes {
        CampaignNotes(
            note: { [self] in note($0) },
            warning: { [self] in
                finish()
                Console.write("aspectctl: warning: \($0)\n")
            })
    }
}
