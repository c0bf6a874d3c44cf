import Foundation
import Testing
import CAspectsABI

/// The kernel lets the members of a segment's group *or* of its creator
/// group (cgid, the creator's egid at shmget, fixed for the segment's life) use its group bits.
/// A shared table's segment is made with the sharing group as its cgid, and one made under
/// another group is obeyed by no one. Runs the outsider as a throwaway uid and gid (setpriv:
/// needs root, as CI and this machine have).
@Suite(.serialized, .tags(.realPrograms)) struct SegmentCreatorGroupTests {
    static let canSwitchUsers = SharedTableTests.canSwitchUsers
    /// The creator's primary group in these tests: a gid nobody else uses, so the outsider's
    /// only way in would be the creator group.
    static let primary: gid_t = 54_321
    static let outsider = "65534"

    /// Whether a process of the outsider, in the creator's primary group but not the sharing
    /// group, can attach the segment read-write (what the attack of issue 30 did).
    func outsiderAttaches(_ shmid: Int32) throws -> Outcome {
        try Proc.run("/usr/bin/setpriv", ["--reuid=\(Self.outsider)", "--regid=\(Self.outsider)", "--groups=\(Self.primary)", "--",
                     "/usr/bin/python3", "-c", "import ctypes; print(ctypes.CDLL(None, use_errno=True).shmat(\(shmid), None, 0) not in (-1, 0xffffffffffffffff))"])
    }

    func create(_ name: String) throws -> Outcome {
        // root whose effective (and real) group is its "primary" one, sharing with group 0
        try Proc.run("/usr/bin/setpriv", ["--regid=\(Self.primary)", "--keep-groups", "--", Paths.aspectctl, "create", "--table", name, "--share-with-group", "0"])
    }

    @Test(.enabled(if: canSwitchUsers, "needs root and setpriv"))
    func aSharedSegmentIsMadeWithTheSharingGroupAsItsCreatorGroup() throws {
        let name = "test-cgid-\(getpid())"
        let path = "/dev/shm/aspects." + name
        defer { TableSegments.removeAnyway(path) }
        let made = try create(name)
        try #require(made.status == 0, "\(made)")
        let a = try #require(TableSegments.anchor(path))
        let ds = try #require(TableSegments.status(a.shmid))
        #expect(ds.shm_perm.cgid == 0 && ds.shm_perm.gid == 0 && ds.shm_perm.mode & 0o777 == 0o660, "cgid \(ds.shm_perm.cgid)")
        let attach = try outsiderAttaches(a.shmid)
        #expect(attach.status == 0 && attach.stdout == "False\n", "the outsider cannot attach it: \(attach)")
        // and the outsider's aspectctl and preload refuse it, as before
        let list = try Proc.run("/usr/bin/setpriv", ["--reuid=\(Self.outsider)", "--regid=\(Self.outsider)", "--groups=\(Self.primary)", "--",
                                Paths.aspectctl, "list", "--table", name])
        #expect(list.status != 0 && list.stderr.contains("belongs to uid 0"), "\(list)")
        // a member is advised
        #expect(try Proc.aspectctl(["add", "--table", name, "--rule", SharedTableTests.hide]).status == 0)
        let member = try SharedTableTests().cat(as: ["--groups=0"], table: name)
        #expect(member.status == 1, "a member is advised: \(member)")
    }

    /// A table whose segment was made under another group (by aspects before this fix, or by
    /// hand): members, the owner's aspectctl and the outsider refuse it; destroy removes it.
    @Test(.enabled(if: canSwitchUsers, "needs root and setpriv"))
    func aSegmentMadeUnderAnotherGroupIsObeyedByNoOne() throws {
        let name = "test-cgid-old-\(getpid())"
        let path = "/dev/shm/aspects." + name
        defer { TableSegments.removeAnyway(path) }
        try #require(try Proc.aspectctl(["create", "--table", name, "--share-with-group", "0"]).status == 0)
        try #require(try Proc.aspectctl(["add", "--table", name, "--rule", SharedTableTests.hide]).status == 0)
        try TableSegments.remake(path, creator: 0, creatorGroup: Self.primary, group: 0, mode: 0o660)
        let a = try #require(TableSegments.anchor(path))
        #expect(TableSegments.status(a.shmid)?.shm_perm.cgid == Self.primary)
        let attach = try outsiderAttaches(a.shmid)
        #expect(attach.stdout == "True\n", "the kernel lets the outsider in through the creator group: \(attach)")
        let member = try SharedTableTests().cat(as: ["--groups=0"], table: name)
        #expect(member.status == 0 && member.stderr.contains("table \(path) has a shared memory segment made under another group than the one it is shared with (that group could open it too) - advice is off"), "\(member)")
        let own = try Proc.run("/bin/cat", ["/etc/hostname"], environment: Proc.preload(table: name).merging(["ASPECTS_STRICT": "1"]) { $1 })
        #expect(own.status == 0 && own.stderr.contains("made under another group"), "the owner's processes neither: \(own)")
        let list = try Proc.aspectctl(["list", "--table", name])
        #expect(list.status != 0 && list.stderr.contains("its shared memory segment was made under group gid \(Self.primary)")
                && list.stderr.contains("aspectctl destroy --table \(name)"), "\(list)")
        let destroyed = try Proc.aspectctl(["destroy", "--table", name])
        #expect(destroyed.status == 0 && TableSegments.status(a.shmid) == nil, "\(destroyed)")
    }

    /// A user who cannot take the sharing group as its effective group is told to run create
    /// under it (sg), and nothing is made.
    @Test(.enabled(if: canSwitchUsers && getpwuid(65534) != nil, "needs root, setpriv and nobody"))
    func createWithoutTheGroupAsEffectiveGroupSaysToUseSg() throws {
        let dir = NSTemporaryDirectory() + "aspects-cgid-\(getpid())"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o777])
        chmod(dir, 0o1777)
        defer { TableSegments.removeScratch(dir) }
        // nobody, in its own group 65534 by /etc/passwd, with 54321 as its effective group
        let r = try Proc.run("/usr/bin/setpriv", ["--reuid=65534", "--regid=\(Self.primary)", "--groups=65534", "--", Paths.aspectctl,
                             "create", "--table", dir + "/t", "--share-with-group", "65534"])
        #expect(r.status != 0 && r.stderr.contains("--share-with-group") && r.stderr.contains("sg "), "\(r)")
        #expect(access(dir + "/t", F_OK) != 0, "nothing is left behind")
        // with the group as its effective group, it is made, and the segment's cgid is the group's
        let ok = try Proc.run("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", "--", Paths.aspectctl,
                              "create", "--table", dir + "/t", "--share-with-group", "65534"])
        #expect(ok.status == 0, "\(ok)")
        let a = try #require(TableSegments.anchor(dir + "/t"))
        #expect(TableSegments.status(a.shmid)?.shm_perm.cgid == 65534)
        _ = shmctl(a.shmid, IPC_RMID, nil)
    }
}
