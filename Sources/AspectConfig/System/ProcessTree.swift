#if canImport(Glibc)
import Glibc
#endif
import CAspectsABI

/// Everything a process started, found by parent links in /proc. With `becomeSubreaper`, a
/// descendant whose parent ends (a backgrounded job, a double-forked or setsid daemon) is
/// re-parented to us, not to init, so every live descendant stays below us in the tree: we
/// can signal it, and `waitpid(-1)` failing with ECHILD means none is left.
public enum ProcessTree {
    /// Makes this process the reaper of its orphaned descendants (Linux 3.4). False when the
    /// kernel refuses; the tree is then only what is still linked to us by parents.
    @discardableResult
    public static func becomeSubreaper() -> Bool { aspects_become_subreaper() == 0 }

    /// The pids of the processes below `root` (zombies too), parents before their children.
    public static func descendants(of root: pid_t = getpid()) -> [pid_t] {
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

    /// The process group of `pid`, or nil when it has ended.
    public static func group(of pid: pid_t) -> pid_t? {
        let g = getpgid(pid)
        return g < 0 ? nil : g
    }

    /// The pid of every process in /proc.
    static func allPIDs() -> [pid_t] {
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
