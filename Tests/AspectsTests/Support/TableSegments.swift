import Foundation
import CAspectsABI
#if canImport(Glibc)
import Glibc
#endif
import AspectsTable

/// A table's segment as tests reach it (aspects_abi.h: a table is a System V segment named by
/// its anchor file): to corrupt what the preload reads, and to see which segments exist.
enum TableSegments {
    /// The anchor of the table file at `path`, read without any check.
    static func anchor(_ path: String) -> aspects_table_anchor? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        return TableFile.anchor(fd)
    }

    /// Runs `body` on the bytes of the segment the anchor at `path` names, attached read-write
    /// without the trust rule (a test writes what an attacker or a bug would).
    static func withBytes<T>(_ path: String, _ body: (UnsafeMutableRawBufferPointer) throws -> T) throws -> T {
        guard let a = anchor(path) else { throw TestFailure("\(path) is not a table anchor") }
        guard let base = shmat(a.shmid, nil, 0), base != UnsafeMutableRawPointer(bitPattern: -1) else {
            throw TestFailure("cannot attach segment \(a.shmid) of \(path): errno \(errno)")
        }
        defer { shmdt(base) }
        return try body(UnsafeMutableRawBufferPointer(start: base, count: Int(a.size)))
    }

    /// Writes `value` at `offset` in the table's segment.
    static func write<T>(_ path: String, _ value: T, at offset: Int) throws {
        try withBytes(path) { bytes in
            withUnsafeBytes(of: value) { bytes.baseAddress!.advanced(by: offset).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        }
    }

    /// The kernel's view of a segment (IPC_STAT), or nil when there is none (removed, or
    /// marked for removal and so unreachable by new processes' anchors).
    static func status(_ shmid: Int32) -> shmid_ds? {
        var ds = shmid_ds()
        guard shmctl(shmid, IPC_STAT, &ds) == 0, ds.shm_perm.mode & 0o1000 /* SHM_DEST */ == 0 else { return nil }
        return ds
    }

    /// Whether the segment with `shmid` still holds the table with `identity`.
    static func holds(_ shmid: Int32, _ identity: (UInt64, UInt64)) -> Bool {
        guard status(shmid) != nil, let base = shmat(shmid, nil, SHM_RDONLY), base != UnsafeMutableRawPointer(bitPattern: -1) else { return false }
        defer { shmdt(base) }
        let h = base.loadUnaligned(as: aspects_table_header.self)
        return h.magic == ASPECTS_MAGIC && h.identity == identity
    }

    /// Removes the segment an anchor named, if it is still there and still that table: its
    /// identity, or (a test may have scribbled over the header) made by this process with
    /// that size.
    static func removeMadeHere(_ anchor: aspects_table_anchor) {
        guard let ds = status(anchor.shmid) else { return }
        if holds(anchor.shmid, anchor.identity) || (ds.shm_cpid == getpid() && UInt64(ds.shm_segsz) == anchor.size) {
            _ = shmctl(anchor.shmid, IPC_RMID, nil)
        }
    }

    /// Makes the table at `path` one that user `uid` made: its bytes move into a segment that
    /// a process of `uid` creates (the creator, cuid, is the kernel's to say), given to `uid`,
    /// group `gid`, mode `mode`, and the anchor names it. For tests of tables other users made
    /// (needs root and setpriv).
    /// `creatorGroup` is the egid it is made under (its cgid), `uid` by default.
    static func remake(_ path: String, creator uid: uid_t, creatorGroup: gid_t? = nil, group gid: gid_t, mode: mode_t) throws {
        guard let a = anchor(path) else { throw TestFailure("\(path) is not a table anchor") }
        let made = try Proc.run("/usr/bin/setpriv", ["--reuid=\(uid)", "--regid=\(creatorGroup ?? uid)", "--clear-groups", "--", "/usr/bin/python3", "-c",
                                                     "import ctypes; print(ctypes.CDLL(None).shmget(0, \(a.size), 0o1600))"])
        guard made.status == 0, let shmid = Int32(made.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), shmid >= 0 else {
            throw TestFailure("no segment made as uid \(uid): \(made)")
        }
        try withBytes(path) { old in
            guard let base = shmat(shmid, nil, 0), base != UnsafeMutableRawPointer(bitPattern: -1) else { throw TestFailure("shmat \(shmid): errno \(errno)") }
            defer { shmdt(base) }
            base.copyMemory(from: old.baseAddress!, byteCount: old.count)
        }
        var ds = shmid_ds()
        guard shmctl(shmid, IPC_STAT, &ds) == 0 else { throw TestFailure("IPC_STAT \(shmid): errno \(errno)") }
        ds.shm_perm.uid = uid
        ds.shm_perm.gid = gid
        ds.shm_perm.mode = mode
        guard shmctl(shmid, IPC_SET, &ds) == 0 else { throw TestFailure("IPC_SET \(shmid): errno \(errno)") }
        var moved = a
        moved.shmid = shmid
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        defer { close(fd) }
        guard fd >= 0, pwrite(fd, &moved, MemoryLayout<aspects_table_anchor>.size, 0) == MemoryLayout<aspects_table_anchor>.size else {
            throw TestFailure("cannot rewrite the anchor \(path): errno \(errno)")
        }
        _ = shmctl(a.shmid, IPC_RMID, nil)
    }

    /// Gives the table's segment to `uid`, group `gid`, mode `mode` (IPC_SET: its creator stays).
    static func reown(_ path: String, owner uid: uid_t, group gid: gid_t, mode: mode_t) throws {
        guard let a = anchor(path), var ds = status(a.shmid) else { throw TestFailure("\(path) names no segment") }
        ds.shm_perm.uid = uid
        ds.shm_perm.gid = gid
        ds.shm_perm.mode = mode
        guard shmctl(a.shmid, IPC_SET, &ds) == 0 else { throw TestFailure("IPC_SET \(a.shmid): errno \(errno)") }
    }

    /// Removes the table at `path` whoever owns it now (a test's table it gave away): its
    /// segment, then the file.
    static func removeAnyway(_ path: String) {
        if let a = anchor(path) { _ = shmctl(a.shmid, IPC_RMID, nil) }
        unlink(path)
    }

    /// Removes `path` (a file or a directory tree) as a test's scratch space, destroying the
    /// tables in it first: a table's segment outlives its file, so a test that only removed the
    /// directory would leave the segment behind.
    static func removeScratch(_ path: String) {
        var st = stat()
        if lstat(path, &st) == 0, st.st_mode & S_IFMT != S_IFLNK {
            // a link is removed, never followed
            let isDir = st.st_mode & S_IFMT == S_IFDIR
            let files = isDir ? (FileManager.default.enumerator(atPath: path)?.allObjects as? [String] ?? []).map { path + "/" + $0 } : [path]
            for file in files {
                guard let name = try? TableName(file), TableFile.isTable(name) else { continue }
                do { try AdviceTable.destroy(name) } catch {
                    // a table the test gave away (destroy refuses it): its segment anyway
                    if let a = anchor(file), holds(a.shmid, a.identity) { _ = shmctl(a.shmid, IPC_RMID, nil) }
                }
            }
        }
        try? FileManager.default.removeItem(atPath: path)
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
