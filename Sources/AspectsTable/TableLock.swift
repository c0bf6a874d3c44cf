import Foundation
#if canImport(Glibc)
import Glibc
#endif
import AspectsCore

/// The writers' lock on a table's file, its anchor (flock, LOCK_EX; AdviceTable.write). Another writer may
/// hold it for long — one stopped half-way, or a user running flock(1) on the file — so a
/// writer never waits silently or forever: when the lock is taken it says once who holds it
/// (the pid /proc/locks gives for the file, and that process's name), waits at most `timeout`
/// seconds, then fails with `tableBusy` naming the holder (aspectctl: exit 75, EX_TEMPFAIL).
package enum TableLock {
    /// Seconds to wait for a lock another process holds; 0 fails at once (`--lock-timeout`).
    nonisolated(unsafe) package static var timeout: Double = 10
    /// Told once, when the lock is taken and the writer starts waiting (aspectctl: stderr).
    nonisolated(unsafe) package static var onWait: ((String) -> Void)? = nil

    /// Takes the lock on `fd` (the table file at `path`), waiting as above.
    static func acquire(_ fd: Int32, _ path: String) throws(AspectsError) {
        if try take(fd, path) { return }
        if timeout > 0 {
            onWait?("table \(path) is locked by \(holder(fd)); waiting up to \(seconds(timeout)) s (--lock-timeout)")
            let deadline = Date().addingTimeInterval(timeout)
            while true {
                let left = deadline.timeIntervalSinceNow
                if left <= 0 { break }
                usleep(useconds_t(min(left, 0.05) * 1_000_000))
                if try take(fd, path) { return }
            }
        }
        let waited = timeout > 0 ? "; gave up after \(seconds(timeout)) s" : " (--lock-timeout 0: no waiting)"
        throw AspectsError(.tableBusy, field: "--lock-timeout", "table \(path) is locked by \(holder(fd)), another writer\(waited)",
                           fix: "let it finish (or stop it), then try again, or wait longer with --lock-timeout SECONDS")
    }

    /// One non-blocking attempt: whether the lock is ours now.
    static func take(_ fd: Int32, _ path: String) throws(AspectsError) -> Bool {
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            if errno == EINTR { continue }
            if errno == EWOULDBLOCK { return false }
            throw System.failure("flock", path)
        }
        return true
    }

    static func seconds(_ t: Double) -> String { t == t.rounded() ? String(Int(t)) : String(t) }

    /// "pid N (name)" of the process /proc/locks says holds a lock on the file of `fd` — with
    /// ", stopped" for a stopped one (a writer stopped half-way holds it until it goes on) — or
    /// "another process" when it cannot be told (no /proc, another pid namespace).
    static func holder(_ fd: Int32) -> String {
        var st = stat()
        guard fstat(fd, &st) == 0, let pid = holderPID(dev: UInt64(st.st_dev), inode: UInt64(st.st_ino)) else { return "another process" }
        let comm = ProcFile.text("/proc/\(pid)/comm", limit: 4096)?.trimmingCharacters(in: .whitespacesAndNewlines)
        // /proc/PID/stat: "PID (comm) STATE ..."; the name may hold spaces and parentheses
        let stat = ProcFile.text("/proc/\(pid)/stat", limit: 4096) ?? ""
        let stopped = stat.lastIndex(of: ")").map { stat[stat.index(after: $0)...].split(separator: " ").first == "T" } ?? false
        let details = [comm, stopped ? "stopped" : nil].compactMap { $0 }
        return "pid \(pid)" + (details.isEmpty ? "" : " (\(details.joined(separator: ", ")))")
    }

    /// The pid of the first granted lock on that file in /proc/locks ("1: FLOCK  ADVISORY  WRITE
    /// PID MAJ:MIN:INODE 0 EOF", device numbers in hex; waiters' lines have "->").
    static func holderPID(dev: UInt64, inode: UInt64) -> Int32? {
        guard let text = ProcFile.text("/proc/locks") else { return nil }
        let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & ~0xfff), minor = (dev & 0xff) | ((dev >> 12) & ~0xff)
        let file = String(major, radix: 16, uppercase: false).leftPadded(2) + ":" + String(minor, radix: 16).leftPadded(2) + ":\(inode)"
        for line in text.split(separator: "\n") {
            let f = line.split(separator: " ", omittingEmptySubsequences: true)
            guard f.count >= 6, f[1] != "->", f[5] == file, let pid = Int32(f[4]), pid > 0 else { continue }
            return pid
        }
        return nil
    }
}

private extension String {
    func leftPadded(_ n: Int) -> String { count >= n ? self : String(repeating: "0", count: n - count) + self }
}
