#if canImport(Glibc)
import Glibc
#endif
import Foundation
import CAspectsABI

/// Where the caller's named tables live, so that `gc` can find a table whose anchor was
/// deleted without `destroy` — a test's temporary directory removed with the table file in
/// it. Its segment stays in the kernel (a named table outlives its creator and has nothing
/// attached between runs, so neither tells it apart), and no name leads to it any more.
///
/// `create` appends one line per table just before the anchor gets its name: the segment, the
/// table's identity (the 128 random bits its header and anchor share) and the anchor's path,
/// to /dev/shm/aspects-anchors-UID (lines "SHMID ID0 ID1 PATH", the path with '%' and newline
/// escaped). The file is only a list of places to look: it is used only when it is the
/// caller's own regular file, not a link, and writable by nobody else, and nothing is removed
/// on its word alone — a segment is an orphan when the kernel and the segment itself say it
/// is the caller's table of that identity, with nothing attached and its creator gone, and
/// its anchor path holds no anchor of that identity (docs/ARCHITECTURE.md §3, storage).
/// Appends and the rewrite that drops the lines of tables gone are made under flock, so two
/// `create`s never interleave their lines (a line is one write of O_APPEND anyway).
public enum AnchorRegistry {
    struct Record: Equatable {
        var shmid: Int32
        var identity: (UInt64, UInt64)
        var anchor: String

        static func == (a: Record, b: Record) -> Bool {
            a.shmid == b.shmid && a.identity == b.identity && a.anchor == b.anchor
        }

        var line: String {
            let path = anchor.replacingOccurrences(of: "%", with: "%25").replacingOccurrences(of: "\n", with: "%0A")
            return "\(shmid) \(String(identity.0, radix: 16)) \(String(identity.1, radix: 16)) \(path)\n"
        }

        init(shmid: Int32, identity: (UInt64, UInt64), anchor: String) {
            self.shmid = shmid
            self.identity = identity
            self.anchor = anchor
        }

        init?(line: Substring) {
            let f = line.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: false)
            guard f.count == 4, let shmid = Int32(f[0]), let a = UInt64(f[1], radix: 16), let b = UInt64(f[2], radix: 16),
                  f[3].hasPrefix("/") else { return nil }
            self.init(shmid: shmid, identity: (a, b),
                      anchor: f[3].replacingOccurrences(of: "%0A", with: "\n").replacingOccurrences(of: "%25", with: "%"))
        }
    }

    /// The registry of the effective user.
    public static let defaultPath = "/dev/shm/aspects-anchors-\(geteuid())"

    /// Notes a table about to be named; a registry that cannot be used costs only `gc`'s
    /// finding it later, never the table. Past 1 MiB, the lines of tables gone are dropped
    /// first.
    static func record(shmid: Int32, identity: (UInt64, UInt64), anchor: String, at path: String = defaultPath) {
        guard let fd = open(path, forWriting: true) else { return }
        defer { close(fd) }
        guard flock(fd, LOCK_EX) == 0 else { return }
        var st = stat()
        if fstat(fd, &st) == 0, st.st_size > 1 << 20 { prune(locked: fd) }
        let bytes = Array(Record(shmid: shmid, identity: identity, anchor: anchor).line.utf8)
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

    static func records(at path: String = defaultPath) -> [Record] {
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
    public static func orphans(at path: String = defaultPath) -> [OrphanedSegment] {
        let segments = SegmentList.read()
        return records(at: path).compactMap { r in
            guard let s = segments[r.shmid] else { return nil }
            let o = OrphanedSegment(record: r, bytes: s.bytes, creatorPID: s.creatorPID, registry: path)
            return o.isOrphaned(in: segments) ? o : nil
        }
    }

    /// Keeps the lines of tables whose segments still exist and are theirs; drops the rest
    /// (destroyed tables, and orphans once removed).
    public static func prune(at path: String = defaultPath) {
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
        guard let text = ProcFile.text("/proc/sysvipc/shm") else { return [:] }
        let me = UInt64(geteuid())
        var out: [Int32: Segment] = [:]
        for line in text.split(separator: "\n").dropFirst() {
            // key shmid perms size cpid lpid nattch uid gid cuid cgid ...
            let f = line.split(separator: " ", omittingEmptySubsequences: true)
            guard f.count >= 11, let shmid = Int32(f[1]), let size = UInt64(f[3]), let cpid = Int32(f[4]), let attached = Int(f[6]),
                  UInt64(f[7]) == me, UInt64(f[9]) == me else { continue }
            out[shmid] = Segment(bytes: size, creatorPID: cpid, attached: attached)
        }
        return out
    }
}

/// A named table's segment whose anchor is gone: the caller's, a table of the recorded
/// identity, nothing attached, its creator gone, and no anchor of that identity at the
/// recorded path (deleted, or another file or table there now).
public struct OrphanedSegment: Sendable {
    public var shmid: Int32
    public var bytes: UInt64
    public var creatorPID: Int32
    /// Where its anchor was.
    public var anchor: String
    let identity: (UInt64, UInt64)
    let registry: String

    init(record: AnchorRegistry.Record, bytes: UInt64, creatorPID: Int32, registry: String) {
        shmid = record.shmid
        self.bytes = bytes
        self.creatorPID = creatorPID
        anchor = record.anchor
        identity = record.identity
        self.registry = registry
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

    /// Whether it is one by `segments` (the list as read): nothing attached, creator gone, the
    /// identity in its header, no anchor naming it.
    func isOrphaned(in segments: [Int32: SegmentList.Segment]) -> Bool {
        guard let s = segments[shmid], s.attached == 0, !TableInventory.Entry.alive(s.creatorPID),
              let id = Self.identity(of: shmid), id == identity else { return false }
        return !Self.anchorStillNames(anchor, shmid: shmid, identity: identity)
    }

    /// Removes it, if it is still an orphan (checked again, on the list as it is now), and
    /// drops its line from the registry.
    public func remove() throws(AspectsError) {
        guard isOrphaned(in: SegmentList.read()) else { return }
        guard aspects_segment_remove(shmid) == 0 else { throw System.failure("remove the shared memory segment", "\(shmid)", errno) }
        AnchorRegistry.prune(at: registry)
    }
}
