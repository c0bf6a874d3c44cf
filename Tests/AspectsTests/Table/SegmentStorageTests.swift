import Foundation
import Testing
import CAspectsABI
#if canImport(Glibc)
import Glibc
#endif

/// A table lives in a System V shared memory segment named by its anchor file
/// (aspects_abi.h), so nobody can shrink it under a host: truncating the file touches no
/// attached process, a member of a shared table's group can write it but not remove it, a
/// segment that disagrees with its file is refused like the file would be, and no segment is
/// left behind by create/destroy or a run.
@Suite struct SegmentStorageTests {
    static let canSwitchUsers = geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")

    /// The preload's environment for `table`, saying on stderr why it refuses one.
    static func strict(_ table: String) -> [String: String?] {
        var env = Proc.preload(table: table)
        env["ASPECTS_STRICT"] = "1"
        return env
    }

    static let hideHostname = #"{"symbol":"open","position":"instead","action":{"fail":"ENOENT"},"when":{"args":[{"arg":0,"glob":"/etc/hostname"}]}}"#

    /// A member of a shared table's group (uid 65534 with the group) can neither remove the
    /// segment nor change its owner or mode: the kernel refuses IPC_RMID and IPC_SET to all
    /// but its owner and creator.
    @Test(.tags(.realPrograms), .requires(canSwitchUsers, "needs root and setpriv"))
    func aMemberCannotRemoveASharedTablesSegment() throws {
        let name = "test-storage-member-\(getpid())"
        defer { _ = try? Proc.aspectctl(["destroy", "--table", name]) }
        #expect(try Proc.aspectctl(["create", "--table", name, "--share-with-group", "0"]).status == 0)
        let path = "/dev/shm/aspects." + name
        let anchor = try #require(TableSegments.anchor(path), "the table file is an anchor")
        let ds = try #require(TableSegments.status(anchor.shmid))
        #expect(ds.shm_perm.mode & 0o777 == 0o660 && ds.shm_perm.gid == 0 && ds.shm_perm.uid == 0 && ds.shm_perm.cuid == 0)
        let member = ["--reuid=65534", "--regid=65534", "--groups=0", "--"]
        let rm = try Proc.run("/usr/bin/setpriv", member + ["/usr/bin/ipcrm", "-m", String(anchor.shmid)])
        #expect(rm.status != 0 && rm.stderr.contains("ermission"), "\(rm)")
        #expect(TableSegments.holds(anchor.shmid, anchor.identity), "the segment is still the table")
        #expect(try Proc.aspectctl(["add", "--table", name, "--rule", Self.hideHostname]).status == 0)
        let r = try Proc.run("/bin/cat", ["/etc/hostname"], environment: Proc.preload(table: name))
        #expect(r.status == 1 && r.stderr.contains("No such file or directory"), "still advised: \(r)")
    }

    /// A segment whose mode or owner disagrees with its file is refused with the file rule's
    /// verdict and words, by aspectctl and by the preload.
    @Test(.tags(.realPrograms), arguments: [("mode", "is writable by group or others"), ("owner", "another user")])
    func aSegmentThatDisagreesWithItsFileIsRefused(change: String, words: String) throws {
        let t = try ScratchTable()
        try t.add(Self.hideHostname)
        let anchor = try #require(TableSegments.anchor(t.name))
        var ds = try #require(TableSegments.status(anchor.shmid))
        if change == "mode" {
            ds.shm_perm.mode = 0o666
        } else {
            guard geteuid() == 0 else { return } // only root gives a segment away
            ds.shm_perm.uid = 65534
        }
        #expect(shmctl(anchor.shmid, IPC_SET, &ds) == 0, "errno \(errno)")
        let list = try Proc.aspectctl(["list", "--table", t.name])
        #expect(list.status != 0 && list.stderr.contains(words), "\(list)")
        let r = try Proc.run("/bin/cat", ["/etc/hostname"], environment: Self.strict(t.name))
        #expect(r.status == 0 && r.stderr.contains("advice is off"), "refused, unadvised: \(r)")
        // destroy is the fix: it removes both
        #expect(try Proc.aspectctl(["destroy", "--table", t.name]).status == 0)
        #expect(TableSegments.status(anchor.shmid) == nil)
    }

    /// A segment another user made behind our anchor (its id reused after a reboot, or a member
    /// of a shared table's group pointing the anchor at its own copy) is never our table, even
    /// with our identity copied in: refused as a lost segment.
    @Test(.tags(.realPrograms), .requires(canSwitchUsers, "needs root and setpriv"))
    func aSegmentAnotherUserMadeIsNotTheTable() throws {
        let t = try ScratchTable()
        try t.add(Self.hideHostname)
        try TableSegments.remake(t.name, creator: 65534, group: 65534, mode: 0o600)
        defer { if let a = TableSegments.anchor(t.name) { _ = shmctl(a.shmid, IPC_RMID, nil) } }
        let list = try Proc.aspectctl(["list", "--table", t.name])
        #expect(list.status != 0 && list.stderr.contains("has lost its shared memory segment"), "\(list)")
        let r = try Proc.run("/bin/cat", ["/etc/hostname"], environment: Self.strict(t.name))
        #expect(r.status == 0 && r.stderr.contains("has lost its shared memory segment"), "unadvised: \(r)")
    }

    /// A table whose segment is gone (a reboot, ipcrm, another IPC namespace): aspectctl says
    /// so and how to re-create it, a program runs unadvised, and destroy removes the file.
    @Test(.tags(.realPrograms)) func aTableWhoseSegmentIsGoneSaysHowToRecreateIt() throws {
        let t = try ScratchTable()
        try t.add(Self.hideHostname)
        let anchor = try #require(TableSegments.anchor(t.name))
        #expect(shmctl(anchor.shmid, IPC_RMID, nil) == 0)
        let list = try Proc.aspectctl(["list", "--table", t.name])
        #expect(list.status != 0 && list.stderr.contains("has lost its shared memory segment")
                && list.stderr.contains("aspectctl destroy --table \(t.name) && aspectctl create --table \(t.name)"), "\(list)")
        let r = try Proc.run("/bin/cat", ["/etc/hostname"], environment: Self.strict(t.name))
        #expect(r.status == 0 && r.stderr.contains("has lost its shared memory segment"), "\(r)")
        #expect(try Proc.aspectctl(["destroy", "--table", t.name]).status == 0)
        #expect(!FileManager.default.fileExists(atPath: t.name))
    }

    /// create then destroy, and a whole `run` (which makes and removes its private table),
    /// leave no segment behind.
    @Test func createDestroyAndRunLeaveNoSegment() throws {
        let dir = NSTemporaryDirectory() + "aspects-storage-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { TableSegments.removeScratch(dir) }
        let table = dir + "/t"
        #expect(try Proc.aspectctl(["create", "--table", table]).status == 0)
        let anchor = try #require(TableSegments.anchor(table))
        #expect(TableSegments.holds(anchor.shmid, anchor.identity))
        #expect(try Proc.aspectctl(["destroy", "--table", table]).status == 0)
        #expect(TableSegments.status(anchor.shmid) == nil, "destroy removed the segment")
        // the run's program keeps a copy of its private table's anchor
        let copy = dir + "/run-anchor"
        let r = try Proc.aspectctl(["run", "--rule", #"{"symbol":"getppid","position":"before","action":{"log":true}}"#, "--",
                                    "/bin/sh", "-c", "cp \"/dev/shm/aspects.$ASPECTS_TABLE\" \"$0\"", copy])
        #expect(r.status == 0, "\(r)")
        let run = try #require(TableSegments.anchor(copy), "\(r)")
        #expect(TableSegments.status(run.shmid) == nil, "run removed its table's segment")
    }

    /// The largest event ring a table may have (explore's baseline) is a segment too.
    @Test(.tags(.realPrograms)) func aTableWithTheLargestRingIsMadeAndAttached() throws {
        let t = try ScratchTable(events: Int(ASPECTS_MAX_EVENT_CAPACITY))
        try t.add(#"{"symbol":"open","position":"after","action":{"log":true},"when":{"args":[{"arg":0,"glob":"/etc/hostname"}]}}"#)
        let r = try Proc.run("/bin/cat", ["/etc/hostname"], environment: Proc.preload(table: t.name))
        #expect(r.status == 0, "\(r)")
        #expect(t.table.rules()[0].fired == 1)
    }
}
