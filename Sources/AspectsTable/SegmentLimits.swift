#if canImport(Glibc)
import Glibc
#endif
import CAspectsABI
import AspectsCore

/// Why the kernel made no segment for a table, in words: which System V limit was reached
/// (kernel.shmmni ids, kernel.shmall pages, kernel.shmmax bytes), how much of it is the
/// caller's — which `aspectctl gc` may free — and who holds the rest, by user: `gc` cannot
/// free another user's segments, so naming only gc sent the reader nowhere (issue 30).
struct SegmentLimits {
    var shmmni: UInt64?
    var shmall: UInt64?
    var shmmax: UInt64?
    var pageSize: UInt64 = UInt64(sysconf(Int32(_SC_PAGESIZE)))
    /// Every segment of the IPC namespace (aspects_segments_each: /proc/sysvipc/shm).
    var segments: [aspects_listed_segment] = []

    static func current() -> SegmentLimits {
        func number(_ name: String) -> UInt64? {
            ProcFile.text("/proc/sys/kernel/" + name, limit: 64).flatMap { UInt64($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
        var limits = SegmentLimits(shmmni: number("shmmni"), shmall: number("shmall"), shmmax: number("shmmax"))
        limits.segments = SystemVSegments.all()
        return limits
    }


    /// "K are yours, M are other users': user bob (uid 1001) holds 4,000, ..." by `measure`
    /// (a count, or pages), the largest holders first.
    func holders(_ uid: UInt32, unit: String, _ measure: (aspects_listed_segment) -> UInt64) -> (mine: UInt64, text: String) {
        var byUser: [UInt32: UInt64] = [:]
        for s in segments { byUser[s.uid, default: 0] += measure(s) }
        let mine = byUser.removeValue(forKey: uid) ?? 0
        let others = byUser.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
        var text = "\(mine) \(unit) \(mine == 1 ? "is" : "are") yours (uid \(uid))"
        if !others.isEmpty {
            let shown = others.prefix(3).map { "\(TableFile.userText($0.key)) holds \($0.value)" }
            text += "; the rest are other users': " + shown.joined(separator: ", ") + (others.count > 3 ? " and \(others.count - 3) more user(s)" : "")
        }
        return (mine, text)
    }

    /// The error for shmget's `e` making a table of `bytes`.
    func failure(_ name: TableName, bytes: Int, errno e: Int32, uid: UInt32 = geteuid()) -> AspectsError {
        let what = "cannot make the shared memory segment of table \"\(name)\" (\(bytes) bytes): \(System.errnoText(e))"
        func tail(mine: UInt64) -> String {
            mine > 0 ? "remove tables of yours left over (`aspectctl tables`, then `aspectctl gc`), ask" : "ask"
        }
        if e == ENOSPC, let shmmni = shmmni, UInt64(segments.count) >= shmmni {
            let (mine, text) = holders(uid, unit: "segment(s)") { _ in 1 }
            return AspectsError(.system, "\(what): all \(shmmni) System V shared memory ids of the system are taken (kernel.shmmni, /proc/sys/kernel/shmmni): \(text)",
                                fix: "\(tail(mine: mine)) their holders to remove theirs (`ipcs -m -p`, `ipcrm -m ID`), or have an administrator raise the limit (`sysctl kernel.shmmni=N`)")
        }
        let pages = { (s: aspects_listed_segment) -> UInt64 in (s.size + pageSize - 1) / pageSize }
        if e == ENOSPC, let shmall = shmall, segments.reduce(0, { $0 + pages($1) }) + (UInt64(bytes) + pageSize - 1) / pageSize > shmall {
            let (mine, text) = holders(uid, unit: "page(s)", pages)
            return AspectsError(.system, "\(what): the system's shared memory would exceed \(shmall) pages of \(pageSize) bytes (kernel.shmall, /proc/sys/kernel/shmall): \(text)",
                                fix: "make the table smaller (--events, --rules), \(tail(mine: mine)) their holders to remove theirs (`ipcs -m -u`, `ipcrm -m ID`), or have an administrator raise the limit (`sysctl kernel.shmall=N`)")
        }
        if e == EINVAL, let shmmax = shmmax, UInt64(bytes) > shmmax {
            return AspectsError(.system, "\(what): a segment holds at most \(shmmax) bytes here (kernel.shmmax, /proc/sys/kernel/shmmax)",
                                fix: "make the table smaller (--events, --rules), or have an administrator raise the limit (`sysctl kernel.shmmax=N`)")
        }
        return AspectsError(.system, what, fix: e == ENOMEM ? "free memory, or make the table smaller (--events, --rules)" : "check `ipcs -m -l` and the process's limits")
    }
}

/// The kernel's list of System V segments (/proc/sysvipc/shm), read by the one parser both
/// sides use (aspects_segments_each).
enum SystemVSegments {
    static func all() -> [aspects_listed_segment] {
        var all: [aspects_listed_segment] = []
        _ = withUnsafeMutablePointer(to: &all) { p in
            aspects_segments_each({ seg, ctx in
                if let seg { ctx!.assumingMemoryBound(to: [aspects_listed_segment].self).pointee.append(seg.pointee) }
                return 0
            }, p)
        }
        return all
    }

    /// The segments the effective user made and owns.
    static func callers() -> [aspects_listed_segment] {
        let me = geteuid()
        return all().filter { $0.uid == me && $0.cuid == me }
    }
}
