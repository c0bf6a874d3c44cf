#if canImport(Glibc)
import Glibc
#endif
import CAspectsABI

/// Everything a process started, found by parent links in /proc. With `becomeSubreaper`, a
/// descendant whose parent ends (a backgrounded job, a double-forked or setsid daemon) is
/// re-parented to us, not to init, so every live descendant stays below us in the tree: we
/// can signal it, and `waitpid(-1)` failing with ECHILD means none is left.
package enum ProcessTree {
    /// Makes this process the reaper of its orphaned descendants (Linux 3.4). False when the
    /// kernel refuses; the tree is then only what is still linked to us by parents.
    @discardableResult
    package static func becomeSubreaper() -> Bool { aspects_become_subreaper() == 0 }

    /// The pids of the processes below `root` (zombies too), parents before their children.
    package static func descendants(of root: pid_t = getpid()) -> [pid_t] {
        var children: [pid_t: [pid_t]] = [:]
        for pid in allPIDs() {
            if let parent = parent(of: pid) { children[parent, default: []].append(pid) }
        }
        var found: [pid_t] = []
        var next = children[root] ?? []
        while let pid = next.popLast() {
            found.append(pid)
            next += children[pid] ?? []
        }
        return found
    }

    /// Kills every descendant until none is left (a process may be starting more while we
    /// look), reaping those that become our children: what a campaign leaves at its end, or
    /// when interrupted.
    package static func killDescendants() {
        while true {
            let left = descendants()
            if left.isEmpty { return }
            for p in left { kill(p, SIGKILL) }
            while waitpid(-1, nil, WNOHANG) > 0 {}
            usleep(10_000)
        }
    }

    /// Ends what a run left running once its command (the leader of process group `group`,
    /// already reaped) has ended (`othersRunning`: other runs are going on meanwhile): our children — with `becomeSubreaper`, every orphan of the
    /// run is one: a background job, a double-forked setsid daemon — that are in the run's
    /// group or whose environment holds `marker` (`NAME=VALUE`, set for the run's command
    /// only, so another run's processes never match), SIGKILLed (a daemon may ignore SIGTERM)
    /// and reaped, round after round as their own children are re-parented to us. The
    /// programs of those still running, not zombies, sorted: the run's survivors. Other
    /// runs' commands are our children too; they are neither in this group nor carry this
    /// marker, and only the pids killed here are reaped (never `waitpid(-1)`, which could take
    /// another run's status).
    package static func endRun(group: pid_t, marker: String?, othersRunning: Bool) -> [String] {
        // No child at all, not even a zombie: nothing of the run is left below us (whatever
        // outlived its parent was re-parented to us), so there is nothing to look for. One
        // call, where the look reads every thread's children file.
        var info = siginfo_t()
        if waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) == -1 && errno == ECHILD {
            kill(-group, SIGKILL)
            return []
        }
        var survivors: [String] = []
        var killed: Set<pid_t> = []
        // Bounded: a process in uninterruptible sleep may take time to die; it is then left
        // (the campaign's end kills and reaps every descendant again). The group is killed
        // after the first look, so that its members still running are seen (and named) alive;
        // then those below them that are not our children yet go with it.
        for round in 0..<2000 {
            defer { if round == 0 { kill(-group, SIGKILL) } }
            var found = false
            for pid in children(othersChanging: othersRunning) where !killed.contains(pid) {
                guard let info = stat(of: pid), info.group == group || marker.map({ environment(of: pid, holds: $0) }) == true else { continue }
                found = true
                if info.state != "Z" { survivors.append(info.program) }
                kill(pid, SIGKILL)
                killed.insert(pid)
            }
            for pid in killed where waitpid(pid, nil, WNOHANG) != 0 { killed.remove(pid) }
            if !found && killed.isEmpty { break }
            usleep(1000)
        }
        return survivors.sorted()
    }

    /// Our children. From /proc/self/task/*/children (each thread's: an orphan is
    /// re-parented to one of our threads) when `othersChanging` is false: that file is cheap
    /// but may skip entries while other children exit, which only other runs' processes do
    /// (-j 2 and more); then from every /proc entry's parent, which costs a read per process.
    static func children(othersChanging: Bool) -> [pid_t] {
        let me = getpid()
        if !othersChanging, let dir = opendir("/proc/self/task") {
            defer { closedir(dir) }
            var pids: [pid_t] = []
            while let entry = readdir(dir) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self) }
                guard Int(name) != nil else { continue }
                guard let text = ProcFile.bytes("/proc/self/task/\(name)/children", limit: 1 << 16) else { return allPIDs().filter { parent(of: $0) == me } }
                pids += text.split(separator: UInt8(ascii: " ")).compactMap { pid_t(String(decoding: $0, as: UTF8.self)) }
            }
            return pids
        }
        return allPIDs().filter { parent(of: $0) == me }
    }

    /// What /proc/PID/stat says of a process: its state letter, its process group, its
    /// program (comm).
    struct Stat {
        var state: Character
        var group: pid_t
        var program: String
    }

    static func stat(of pid: pid_t) -> Stat? {
        guard let bytes = ProcFile.bytes("/proc/\(pid)/stat", limit: 512),
              let open = bytes.firstIndex(of: UInt8(ascii: "(")), let close = bytes.lastIndex(of: UInt8(ascii: ")")), open < close else { return nil }
        let fields = bytes[(close + 1)...].split(separator: UInt8(ascii: " "))
        guard fields.count > 2, let group = pid_t(String(decoding: fields[2], as: UTF8.self)) else { return nil }
        return Stat(state: Character(UnicodeScalar(fields[0].first ?? UInt8(ascii: "?"))), group: group,
                    program: String(decoding: bytes[(open + 1)..<close], as: UTF8.self))
    }

    /// Whether `pid`'s environment (as it was at its exec) holds the entry `NAME=VALUE`.
    static func environment(of pid: pid_t, holds entry: String) -> Bool {
        guard let bytes = ProcFile.bytes("/proc/\(pid)/environ", limit: 1 << 20) else { return false }
        let wanted = Array(entry.utf8)
        return bytes.split(separator: 0).contains { $0.elementsEqual(wanted) }
    }

    /// A /proc file's first `limit` bytes; nil when it cannot be read.
    /// The process group of `pid`, or nil when it has ended.
    package static func group(of pid: pid_t) -> pid_t? {
        let g = getpgid(pid)
        return g < 0 ? nil : g
    }

    /// The pid of every process in /proc.
    package static func allPIDs() -> [pid_t] {
        guard let dir = opendir("/proc") else { return [] }
        defer { closedir(dir) }
        var pids: [pid_t] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if let pid = pid_t(name), pid > 0 { pids.append(pid) }
        }
        return pids
    }

    /// The parent of `pid` from /proc/PID/stat: the 2nd field after the command name, which
    /// is in parentheses and may itself hold spaces and parentheses (hence the last ')').
    static func parent(of pid: pid_t) -> pid_t? {
        let fd = open("/proc/\(pid)/stat", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 512)
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard n > 0 else { return nil }
        let bytes = buffer.prefix(n)
        guard let close = bytes.lastIndex(of: UInt8(ascii: ")")) else { return nil }
        let fields = bytes[(close + 1)...].split(separator: UInt8(ascii: " "))
        guard fields.count > 1 else { return nil }
        return pid_t(String(decoding: fields[1], as: UTF8.self))
    }
}
