#if canImport(Glibc)
import Glibc
#endif
import Foundation
import CAspectsABI
import AspectsCore

/// Where the caller's named tables live, so that `gc` can find a table whose anchor was
/// deleted without `destroy` — a test's temporary directory removed with the table file in
/// it. Its segment stays in the kernel (a named table outlives its creator and has nothing
/// attached between runs, so neither tells it apart), and no name leads to it any more.
///
/// `create` appends one line per table just before the anchor gets its name: the segment, the
/// table's identity (the 128 random bits its header and anchor share), where the anchor is
/// (the mount namespace it was made in, its device and inode) and its path, to
/// /dev/shm/aspects-anchors-UID (lines "SHMID ID0 ID1 @MNTNS:DEV:INO PATH", the path with '%'
/// and newline escaped). A path means something only in its mount namespace (systemd's
/// PrivateTmp, a container sharing the IPC namespace): it is looked at there, through a
/// process of that namespace (/proc/PID/root), and a table whose namespace has no process
/// left is "not checkable here", never taken for an orphan. The file is only a list of places to look: it is used only when it is the
/// caller's own regular file, not a link, and writable by nobody else, and nothing is removed
/// on its word alone — a segment is an orphan when the kernel and the segment itself say it
/// is the caller's table of that identity, with nothing attached and its creator gone, and
/// its anchor path holds no anchor of that identity (docs/ARCHITECTURE.md §3, storage).
/// Appends and the rewrite that drops the lines of tables gone are made under flock, so two
/// `create`s never interleave their lines (a line is one write of O_APPEND anyway).
package enum AnchorRegistry {
    package struct Record: Equatable {
        package var shmid: Int32
        var identity: (UInt64, UInt64)
        package var anchor: String
        /// Where the anchor was made: nil in a line written before this was recorded.
        package var place: AnchorPlace?

        package static func == (a: Record, b: Record) -> Bool {
            a.shmid == b.shmid && a.identity == b.identity && a.anchor == b.anchor && a.place == b.place
        }

        package var line: String {
            // (Foundation's replacingOccurrences cost every table a run of explore makes ~20 µs.)
            var path = ""
            for c in anchor.unicodeScalars {
                switch c {
                case "%": path += "%25"
                case "\n": path += "%0A"
                default: path.unicodeScalars.append(c)
                }
            }
            let at = place.map { "@\($0.mountNamespace):\($0.device):\($0.inode) " } ?? ""
            return "\(shmid) \(String(identity.0, radix: 16)) \(String(identity.1, radix: 16)) \(at)\(path)\n"
        }

        package init(shmid: Int32, identity: (UInt64, UInt64), anchor: String, place: AnchorPlace?) {
            self.shmid = shmid
            self.identity = identity
            self.anchor = anchor
            self.place = place
        }

        package init?(line: Substring) {
            var f = line.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: false)
            guard f.count == 4, let shmid = Int32(f[0]), let a = UInt64(f[1], radix: 16), let b = UInt64(f[2], radix: 16) else { return nil }
            var place: AnchorPlace? = nil
            if f[3].hasPrefix("@") {
                let rest = f[3].split(separator: " ", maxSplits: 1, omittingEmptySubsequences: false)
                let p = rest[0].dropFirst().split(separator: ":").compactMap { UInt64($0) }
                guard rest.count == 2, p.count == 3 else { return nil }
                place = AnchorPlace(mountNamespace: p[0], device: p[1], inode: p[2])
                f[3] = rest[1]
            }
            guard f[3].hasPrefix("/") else { return nil }
            self.init(shmid: shmid, identity: (a, b),
                      anchor: f[3].replacingOccurrences(of: "%0A", with: "\n").replacingOccurrences(of: "%25", with: "%"), place: place)
        }
    }

    /// The registry of the effective user.
    package static let defaultPath = "/dev/shm/aspects-anchors-\(geteuid())"

    /// Notes a table about to be named; a registry that cannot be used costs only `gc`'s
    /// finding it later, never the table. Past 1 MiB, the lines of tables gone are dropped
    /// first.
    package static func record(shmid: Int32, identity: (UInt64, UInt64), anchor: String, file: Int32, at path: String = defaultPath) {
        guard let fd = open(path, forWriting: true) else { return }
        defer { close(fd) }
        guard flock(fd, LOCK_EX) == 0 else { return }
        var st = stat()
        if fstat(fd, &st) == 0, st.st_size > 1 << 20 { prune(locked: fd) }
        let bytes = Array(Record(shmid: shmid, identity: identity, anchor: anchor, place: AnchorPlace(file: file)).line.utf8)
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    }

    /// The registry, opened only when it is the caller's regular file that nobody else can
    /// write (O_NOFOLLOW: a link planted at its name is refused, not followed).
    static func open(_ path: String, forWriting: Bool) -> Int32? {
        let flags = (forWriting ? O_RDWR | O_CREAT | O_APPEND : O_RDONLY) | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK
        let fd = Glibc.open(path, flags, 0o600)
        guard fd >= 0 else { return nil }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG, st.st_uid == geteuid(), st.st_mode & 0o022 == 0 else {
            close(fd)
            return nil
        }
        return fd
    }

    /// Why the registry at `path` is not used, when something is there that is not the
    /// caller's own registry (another user's file planted at its name, a link, a file others
    /// can write): then the tables whose file was deleted cannot be found, and `tables` and
    /// `gc` say so rather than report none. nil: it is the caller's, or there is none.
    package static func problem(at path: String = defaultPath) -> String? {
        var st = stat()
        guard lstat(path, &st) == 0 else { return nil }
        let what: String
        if st.st_mode & S_IFMT == S_IFLNK {
            what = "is a symbolic link"
        } else if st.st_mode & S_IFMT != S_IFREG {
            what = "is not a regular file"
        } else if st.st_uid != geteuid() {
            what = "belongs to \(TableFile.userText(st.st_uid)), not to you"
        } else if st.st_mode & 0o022 != 0 {
            what = "can be written by others (mode \(String(st.st_mode & 0o777, radix: 8)))"
        } else {
            return nil
        }
        return "\(path), where create notes your tables so that gc finds those whose file was deleted, \(what): it is not read, so such tables cannot be found; remove it (if it is not yours, ask its owner or root to) and the tables made after that are found again"
    }

    package static func records(at path: String = defaultPath) -> [Record] {
        guard let fd = open(path, forWriting: false) else { return [] }
        defer { close(fd) }
        _ = flock(fd, LOCK_SH)
        return records(fd)
    }

    /// The lines of an open registry, read from its start.
    static func records(_ fd: Int32) -> [Record] {
        var data = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while data.count <= 64 << 20 { // a registry larger than this is not read further
            let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(data.count)) }
            if n <= 0 { break }
            data += buffer[0..<n]
        }
        return String(decoding: data, as: UTF8.self).split(separator: "\n").compactMap { Record(line: $0) }
    }

    /// The caller's tables whose anchors are gone, each checked as OrphanedSegment says.
    package static func orphans(at path: String = defaultPath) -> [OrphanedSegment] {
        candidates(at: path).filter { $0.verdict == .orphaned }.map(\.segment)
    }

    /// The caller's tables with nothing attached and their creator gone whose anchor cannot be
    /// looked at from here (made in a mount namespace with no process left, or noted before
    /// namespaces were): kept, and said.
    package static func uncheckable(at path: String = defaultPath) -> [OrphanedSegment] {
        candidates(at: path).filter { $0.verdict == .notCheckableHere }.map(\.segment)
    }

    static func candidates(at path: String) -> [(segment: OrphanedSegment, verdict: OrphanedSegment.Verdict)] {
        let segments = SegmentList.read()
        let namespaces = MountNamespaces()
        return records(at: path).compactMap { r in
            guard let s = segments[r.shmid] else { return nil }
            let o = OrphanedSegment(record: r, bytes: s.bytes, creatorPID: s.creatorPID, registry: path)
            let v = o.verdict(in: segments, namespaces)
            return v == .inUse ? nil : (o, v)
        }
    }

    /// Keeps the lines of tables whose segments still exist and are theirs; drops the rest
    /// (destroyed tables, and orphans once removed).
    package static func prune(at path: String = defaultPath) {
        guard let fd = open(path, forWriting: true) else { return }
        defer { close(fd) }
        guard flock(fd, LOCK_EX) == 0 else { return }
        prune(locked: fd)
    }

    private static func prune(locked fd: Int32) {
        let all = records(fd)
        let segments = SegmentList.read()
        let kept = all.filter { r in segments[r.shmid] != nil && OrphanedSegment.identity(of: r.shmid).map { $0 == r.identity } == true }
        guard kept.count < all.count, ftruncate(fd, 0) == 0 else { return }
        let bytes = Array(kept.map(\.line).joined().utf8)
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } // O_APPEND: at the new end, 0
    }
}

/// The segments of /proc/sysvipc/shm the caller made and owns, by shmid.
enum SegmentList {
    /// The table header a segment holds (read-only): nil when it is being removed, too small,
    /// cannot be attached, or holds no table's magic — a table's, or that of a segment `create`
    /// made and had not filled yet (ASPECTS_MAGIC_UNFINISHED, never anchored).
    static func tableHeader(of shmid: Int32) -> aspects_table_header? {
        var ds = shmid_ds()
        guard shmctl(shmid, IPC_STAT, &ds) == 0, ds.shm_perm.mode & 0o1000 /* SHM_DEST */ == 0,
              Int(ds.shm_segsz) >= MemoryLayout<aspects_table_header>.size,
              let base = shmat(shmid, nil, SHM_RDONLY), base != UnsafeMutableRawPointer(bitPattern: -1) else { return nil }
        defer { shmdt(base) }
        let h = base.loadUnaligned(as: aspects_table_header.self)
        return h.magic == ASPECTS_MAGIC || h.magic == ASPECTS_MAGIC_UNFINISHED ? h : nil
    }

    struct Segment { var bytes: UInt64; var creatorPID: Int32; var attached: Int }

    static func read() -> [Int32: Segment] {
        var out: [Int32: Segment] = [:]
        for s in SystemVSegments.callers() { out[s.shmid] = Segment(bytes: s.size, creatorPID: s.cpid, attached: Int(s.nattch)) }
        return out
    }
}

/// A named table's segment whose anchor is gone: the caller's, a table of the recorded
/// identity, nothing attached, its creator gone, and no anchor of that identity at the
/// recorded path (deleted, or another file or table there now).
package struct OrphanedSegment: Sendable {
    package var shmid: Int32
    package var bytes: UInt64
    package var creatorPID: Int32
    /// Where its anchor was.
    package var anchor: String
    let identity: (UInt64, UInt64)
    let place: AnchorPlace?
    let registry: String

    init(record: AnchorRegistry.Record, bytes: UInt64, creatorPID: Int32, registry: String) {
        shmid = record.shmid
        self.bytes = bytes
        self.creatorPID = creatorPID
        anchor = record.anchor
        identity = record.identity
        place = record.place
        self.registry = registry
    }

    /// Why a table with nothing attached cannot be judged from here.
    package var uncheckableReason: String {
        guard let place else { return "noted before create recorded mount namespaces: its path cannot be judged" }
        return "made in mount namespace \(place.mountNamespace), where no process is left to look through, and not this one (\(AnchorPlace.currentMountNamespace.map(String.init) ?? "?"))"
    }

    /// The identity in the header of an anchored table segment; nil for anything else.
    static func identity(of shmid: Int32) -> (UInt64, UInt64)? {
        guard let h = SegmentList.tableHeader(of: shmid), h.anchored == 1 else { return nil }
        return (h.identity.0, h.identity.1)
    }

    /// Whether the anchor path still names this table: a regular file holding an anchor of
    /// this segment and identity. Unknown (a directory on the way that cannot be searched)
    /// counts as yes: only a path that surely holds no such anchor makes an orphan.
    static func anchorStillNames(_ path: String, shmid: Int32, identity: (UInt64, UInt64)) -> Bool {
        var st = stat()
        if lstat(path, &st) != 0 { return !(errno == ENOENT || errno == ENOTDIR) }
        guard st.st_mode & S_IFMT == S_IFREG, Int(st.st_size) == MemoryLayout<aspects_table_anchor>.size else { return false }
        let fd = Glibc.open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return true }
        defer { close(fd) }
        var a = aspects_table_anchor()
        guard read(fd, &a, MemoryLayout<aspects_table_anchor>.size) == MemoryLayout<aspects_table_anchor>.size else { return true }
        return a.magic == ASPECTS_ANCHOR_MAGIC && a.shmid == shmid && a.identity.0 == identity.0 && a.identity.1 == identity.1
    }

    enum Verdict { case inUse, orphaned, notCheckableHere }

    /// Its verdict by `segments` (the list as read): an orphan has nothing attached, its
    /// creator gone, the identity in its header, and no anchor naming it at its path as seen
    /// in the mount namespace it was made in — this process's own, or through a process that
    /// is in that one; with no such process, or no namespace noted, it is not checkable here.
    func verdict(in segments: [Int32: SegmentList.Segment], _ namespaces: MountNamespaces) -> Verdict {
        guard let s = segments[shmid], s.attached == 0, !TableInventory.Entry.alive(s.creatorPID),
              let id = Self.identity(of: shmid), id == identity else { return .inUse }
        guard let place, let root = namespaces.root(of: place.mountNamespace) else { return .notCheckableHere }
        return Self.anchorStillNames(root + anchor, shmid: shmid, identity: identity) ? .inUse : .orphaned
    }

    /// Removes it, if it is still an orphan (checked again, on the list as it is now), and
    /// drops its line from the registry.
    package func remove() throws(AspectsError) {
        guard verdict(in: SegmentList.read(), MountNamespaces()) == .orphaned else { return }
        guard aspects_segment_remove(shmid) == 0 else { throw System.failure("remove the shared memory segment", "\(shmid)", errno) }
        AnchorRegistry.prune(at: registry)
    }
}

/// Where an anchor was made: the mount namespace of the process that made it (the inode of
/// /proc/self/ns/mnt), and the file's device and inode.
package struct AnchorPlace: Equatable, Sendable {
    package var mountNamespace: UInt64
    package var device: UInt64
    package var inode: UInt64

    package init(mountNamespace: UInt64, device: UInt64, inode: UInt64) {
        self.mountNamespace = mountNamespace
        self.device = device
        self.inode = inode
    }

    /// The place of the open anchor `file`, in this process's namespace; nil when either
    /// cannot be read (then the table is never judged an orphan: not checkable).
    package init?(file: Int32) {
        var st = stat()
        guard let ns = Self.currentMountNamespace, fstat(file, &st) == 0 else { return nil }
        self.init(mountNamespace: ns, device: UInt64(st.st_dev), inode: UInt64(st.st_ino))
    }

    package static var currentMountNamespace: UInt64? { MountNamespaces.namespace(of: "self") }
}

/// The mount namespaces of the processes the caller can look into: where a path recorded in
/// one of them can be looked at from here (/proc/PID/root of a process in it).
final class MountNamespaces {
    private var roots: [UInt64: String] = [:]
    private var scanned = false
    private let own = MountNamespaces.namespace(of: "self")

    static func namespace(of pid: String) -> UInt64? {
        var st = stat()
        return stat("/proc/\(pid)/ns/mnt", &st) == 0 ? UInt64(st.st_ino) : nil
    }

    /// The prefix under which paths of namespace `ns` are seen: "" for this process's own, a
    /// process's /proc/PID/root for another with a process left in it, nil for none.
    func root(of ns: UInt64) -> String? {
        if ns == own { return "" }
        if !scanned {
            scanned = true
            for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] where entry.allSatisfy(\.isNumber) {
                if let n = Self.namespace(of: entry), roots[n] == nil { roots[n] = "/proc/\(entry)/root" }
            }
        }
        return roots[ns]
    }
}

/// What `gc PATTERN` matches of a table whose file is gone: its path or the file's name, as
/// the pattern names a table in /dev/shm by its name ('ci-*').
package enum GCPattern {
    package static func matches(_ pattern: String, anchor: String) -> Bool {
        let name = anchor.lastIndex(of: "/").map { String(anchor[anchor.index(after: $0)...]) } ?? anchor
        return fnmatch(pattern, anchor, 0) == 0 || fnmatch(pattern, name, 0) == 0
    }
}
