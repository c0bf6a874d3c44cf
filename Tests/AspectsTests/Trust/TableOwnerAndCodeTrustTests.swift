import Foundation
import Testing
import CAspectsABI
import AspectsTable

/// Whom a process trusts beyond its own private tables: a table shared with a group is obeyed only when its owner is a
/// member of that group (by the system's files), and a process obeying someone else's table
/// says so; code from a table is only code nobody else could change, opened once and loaded
/// from that very descriptor, a regular file, and resolved among its own definitions.
/// Programs run as other users through setpriv (root, as CI and this machine have).
@Suite(.serialized) struct TableOwnerAndCodeTrustTests {
    static let canSwitchUsers = SharedTableTests.canSwitchUsers
    static let isRoot = geteuid() == 0

    // ---- group sharing trusts who made the table ----

    /// A group the current user is not a member of (by getgrouplist), if the system has one.
    static let outsiderGroup: UInt32? = {
        guard let pw = getpwuid(geteuid()) else { return nil }
        var count: Int32 = 256
        var mine = [gid_t](repeating: 0, count: 256)
        guard getgrouplist(pw.pointee.pw_name, pw.pointee.pw_gid, &mine, &count) >= 0 else { return nil }
        let member = Set(mine.prefix(Int(count)))
        setgrent()
        defer { endgrent() }
        while let g = getgrent() {
            if !member.contains(g.pointee.gr_gid) && g.pointee.gr_gid != 65534 { return g.pointee.gr_gid }
        }
        return nil
    }()

    static func userName(_ uid: uid_t) -> String { getpwuid(uid).map { String(cString: $0.pointee.pw_name) } ?? "\(uid)" }
    static func groupName(_ gid: gid_t) -> String { getgrgid(gid).map { String(cString: $0.pointee.gr_name) } ?? "\(gid)" }

    /// A named table root shares with its own group 0, holding the rule that hides
    /// /etc/hostname; `body` gets its name and path. Removed after, whoever then owns it.
    func withSharedTable(_ body: (String, String) throws -> Void) throws {
        let name = "test-trust-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let path = "/dev/shm/aspects." + name
        defer { TableSegments.removeAnyway(path) }
        let made = try Proc.aspectctl(["create", "--table", name, "--share-with-group", "0"])
        try #require(made.status == 0, "\(made)")
        try #require(try Proc.aspectctl(["add", "--table", name, "--rule", SharedTableTests.hide]).status == 0)
        try body(name, path)
    }

    /// Gives the table (its file, and its segment: made by `uid` under group `gid`, as a
    /// shared segment must be) to `uid`:`gid` and writes `gid` into its header as the group it
    /// was shared with — what a creator could have made (through a setgid directory, or root).
    func reshare(_ path: String, owner uid: uid_t, group gid: gid_t) throws {
        try #require(chown(path, uid, gid) == 0 && chmod(path, 0o660) == 0)
        try TableSegments.remake(path, creator: uid, creatorGroup: gid, group: gid, mode: 0o660)
        let offset = MemoryLayout<aspects_table_header>.offset(of: \aspects_table_header.shared_gid)!
        try TableSegments.write(path, UInt32(gid), at: offset)
    }

    /// cat /etc/hostname as `uid` with `groups` under the preload, `table` named.
    func cat(uid: String, groups: [String], table: String, extra: [String] = []) throws -> Outcome {
        try Proc.run("/usr/bin/setpriv", ["--reuid=\(uid)", "--regid=\(uid)"] + groups + ["--", "/usr/bin/env",
                     "LD_PRELOAD=\(try SharedTableTests.readableLibrary())", "ASPECTS_TABLE=\(table)"] + extra + ["/bin/cat", "/etc/hostname"])
    }

    /// The preload's reading of /etc/passwd and /etc/group agrees with the C library's for
    /// every user and group of the files (this system's NSS reads the files).
    @Test(.tags(.fast)) func membershipAsTheSystemFilesSayIt() throws {
        var users: [(uid_t, String, gid_t)] = []
        setpwent()
        while let p = getpwent() { users.append((p.pointee.pw_uid, String(cString: p.pointee.pw_name), p.pointee.pw_gid)) }
        endpwent()
        var gids: [gid_t] = []
        setgrent()
        while let g = getgrent() { gids.append(g.pointee.gr_gid) }
        endgrent()
        #expect(!users.isEmpty && !gids.isEmpty)
        var compared = 0
        for (uid, name, primary) in users where getpwuid(uid).map({ String(cString: $0.pointee.pw_name) }) == name {
            var count: Int32 = 512
            var list = [gid_t](repeating: 0, count: 512)
            guard getgrouplist(name, primary, &list, &count) >= 0 else { continue }
            let member = Set(list.prefix(Int(count)))
            for gid in gids {
                #expect((aspects_user_in_group(uid, gid) != 0) == member.contains(gid), "\(name) in \(gid)")
                compared += 1
            }
            var buf = [CChar](repeating: 0, count: 256)
            #expect(aspects_user_name(uid, &buf, 256) == 1 && String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) == name)
        }
        #expect(compared > 0)
        #expect(aspects_user_in_group(4_000_000_000, 0) == 0, "an unknown user is a member of nothing")
    }

    @Test(.requires(outsiderGroup != nil, "needs a group the user is not in"))
    func createRefusesAGroupTheCreatorIsNotIn() throws {
        let gid = try #require(Self.outsiderGroup)
        let name = "test-trust-outsider-\(getpid())"
        defer { unlink("/dev/shm/aspects." + name) }
        let r = try Proc.aspectctl(["create", "--table", name, "--share-with-group", String(gid)])
        #expect(r.status != 0, "\(r)")
        #expect(r.stderr.contains("--share-with-group") && r.stderr.contains("not a member of group \(Self.groupName(gid)) (gid \(gid))"), "\(r)")
        #expect(access("/dev/shm/aspects." + name, F_OK) != 0, "no table is left behind")
    }

    /// Root is no exception: its own table, shared with a group root is not in, is not obeyed
    /// by root's processes (the group's members could write it).
    @Test(.tags(.realPrograms), .requires(isRoot && outsiderGroup != nil, "needs root and a group root is not in"))
    func rootDoesNotObeyItsTableSharedWithAGroupItIsNotIn() throws {
        let gid = try #require(Self.outsiderGroup)
        try withSharedTable { name, path in
            try reshare(path, owner: 0, group: gid)
            let r = try Proc.run("/bin/cat", ["/etc/hostname"], environment: Proc.preload(table: name).merging(["ASPECTS_DEBUG": "1"]) { $1 })
            #expect(r.status == 0, "root's cat is not advised: \(r)")
            #expect(r.stderr.contains("libaspects: table \(path) is shared with a group its owner is not a member of; ignored"), "\(r)")
            let list = try Proc.aspectctl(["list", "--table", name])
            #expect(list.status != 0 && list.stderr.contains("shared with group \(Self.groupName(gid)) (gid \(gid))"), "\(list)")
        }
    }

    /// An outsider's table in the group (made through a setgid directory): members ignore it.
    @Test(.tags(.realPrograms), .requires(canSwitchUsers && getpwuid(1) != nil, "needs root, setpriv and uid 1"))
    func membersDoNotObeyAnOutsidersTable() throws {
        try withSharedTable { name, path in
            // nobody (65534) is no member of group 0: neither its primary group nor listed
            try reshare(path, owner: 65534, group: 0)
            let member = try cat(uid: "1", groups: ["--groups=0"], table: name, extra: ["ASPECTS_STRICT=1"])
            #expect(member.status == 0, "the member is not advised: \(member)")
            #expect(member.stderr.contains("table \(path) is shared with a group its owner is not a member of - advice is off"), "\(member)")
        }
    }

    /// A member obeying a table it does not own says whose it is, always (not only in debug).
    @Test(.tags(.realPrograms), .requires(canSwitchUsers, "needs root and setpriv"))
    func aMemberSaysWhoseTableItObeys() throws {
        try withSharedTable { name, path in
            let member = try cat(uid: "65534", groups: ["--groups=0"], table: name)
            #expect(member.status == 1, "the member is advised: \(member)")
            let line = "libaspects: obeying table \(path) owned by user \(Self.userName(0)) (uid 0), shared with group \(Self.groupName(0)) (gid 0)"
            #expect(member.stderr.contains(line), "\(member)")
            // the owner's own processes obey their own table: nothing to say
            let own = try Proc.run("/bin/cat", ["/etc/hostname"], environment: Proc.preload(table: name))
            #expect(own.status == 1 && !own.stderr.contains("obeying"), "\(own)")
        }
    }

    /// `run --table` and `list` on someone else's table say whose it is.
    @Test(.tags(.realPrograms), .requires(canSwitchUsers && getpwuid(65534) != nil, "needs root, setpriv and nobody"))
    func runAndListSayWhoseTableItIs() throws {
        try withSharedTable { name, path in
            // nobody's table, shared with nobody's primary group; root works in it as a member
            try reshare(path, owner: 65534, group: 65534)
            let whose = "owned by user \(Self.userName(65534)) (uid 65534), shared with group \(Self.groupName(65534)) (gid 65534)"
            let list = try Proc.run("/usr/bin/setpriv", ["--groups=65534", "--", Paths.aspectctl, "list", "--table", name])
            #expect(list.status == 0 && list.stderr.contains(whose), "\(list)")
            let run = try Proc.run("/usr/bin/setpriv", ["--groups=65534", "--", Paths.aspectctl, "run", "--table", name,
                                                         "--preload", try SharedTableTests.readableLibrary(), "--", "/bin/true"])
            #expect(run.status == 0 && run.stderr.contains(whose), "\(run)")
        }
    }

    // ---- code from a table is code nobody else could change ----

    static func probe() throws -> String { try AdviceCodeTests.probe() }
    static func host() throws -> String { try AdviceCodeTests.host() }

    /// A private directory for objects (0755, root's when the tests run as root).
    func objectDirectory() throws -> String {
        let dir = NSTemporaryDirectory() + "aspects-objects-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        chmod(dir, 0o755)
        return dir
    }

    static func getppidRule(_ object: String, _ function: String = "probe_getppid_4242") -> String {
        #"{"id":"pp","symbol":"getppid","position":"instead","action":{"call":"\#(object):\#(function)"}}"#
    }

    /// advice_host fork under an own table holding `rule` (added while `object` is the probe).
    func runHost(rule: String, prepare: () throws -> Void = {}) throws -> (BoundedOutcome, [TableEvent]) {
        let t = try ScratchTable()
        try t.add(rule)
        try prepare()
        var env = Proc.preload(table: t.name)
        env["ASPECTS_DEBUG"] = "1"
        let r = try BoundedRun.run(try Self.host(), ["fork"], environment: env, timeout: 60)
        return (r, t.table.events(from: 0).events)
    }

    @Test(.requires(isRoot, "the guarded rule applies to every table of root"))
    func rootRefusesAnAdviceObjectBehindASymbolicLink() throws {
        let dir = try objectDirectory()
        defer { TableSegments.removeScratch(dir) }
        try FileManager.default.copyItem(atPath: try Self.probe(), toPath: dir + "/libprobe.so")
        try FileManager.default.createSymbolicLink(atPath: dir + "/link.so", withDestinationPath: dir + "/libprobe.so")
        try FileManager.default.createSymbolicLink(atPath: dir + "/linkdir", withDestinationPath: dir)
        for (object, component) in [(dir + "/link.so", dir + "/link.so"), (dir + "/linkdir/libprobe.so", dir + "/linkdir")] {
            let (r, events) = try runHost(rule: Self.getppidRule(object))
            #expect(AdviceCodeTests.forkRanUnadvised(stdout: r.stdout, stderr: r.stderr), "\(object): \(r)")
            #expect(r.stderr.contains("libaspects: advice object \(object) not loaded: \(component) is reached through a symbolic link"), "\(r)")
            #expect(!events.isEmpty && events.allSatisfy { $0.kind == "unavailable" }, "\(events)")
        }
        // the real path is loaded
        let (ok, _) = try runHost(rule: Self.getppidRule(dir + "/libprobe.so"))
        #expect(ok.stdout == "child: 4242 parent: 4242\n", "\(ok)")
    }

    @Test(.requires(isRoot, "the guarded rule applies to every table of root"))
    func rootRefusesAnAdviceObjectOthersCouldReplace() throws {
        let dir = try objectDirectory()
        defer { TableSegments.removeScratch(dir) }
        let open = dir + "/open"
        try FileManager.default.createDirectory(atPath: open, withIntermediateDirectories: true)
        chmod(open, 0o777)
        try FileManager.default.copyItem(atPath: try Self.probe(), toPath: open + "/libprobe.so")
        chmod(open + "/libprobe.so", 0o644)
        let (r, _) = try runHost(rule: Self.getppidRule(open + "/libprobe.so"))
        #expect(AdviceCodeTests.forkRanUnadvised(stdout: r.stdout, stderr: r.stderr), "\(r)")
        #expect(r.stderr.contains("libaspects: advice object \(open)/libprobe.so not loaded: \(open) is writable by group or others"), "\(r)")
    }

    /// An object swapped for a FIFO after `add`: refused, and nothing waits for a writer.
    @Test func aFIFOInPlaceOfTheObjectIsRefused() throws {
        let dir = try objectDirectory()
        defer { TableSegments.removeScratch(dir) }
        let object = dir + "/libprobe.so"
        try FileManager.default.copyItem(atPath: try Self.probe(), toPath: object)
        let (r, events) = try runHost(rule: Self.getppidRule(object)) {
            unlink(object)
            try #require(mkfifo(object, 0o644) == 0)
        }
        #expect(!r.timedOut && r.status == 0 && AdviceCodeTests.forkRanUnadvised(stdout: r.stdout, stderr: r.stderr), "\(r)")
        #expect(r.stderr.contains("libaspects: advice object \(object) not loaded: \(object) is not a regular file"), "\(r)")
        #expect(!events.isEmpty && events.allSatisfy { $0.kind == "unavailable" }, "\(events)")
    }

    /// The object is loaded from the descriptor that was checked (/proc/self/fd/N), so what
    /// runs is the inode checked, whatever is renamed into its path meanwhile.
    @Test func theCheckedDescriptorIsWhatIsLoaded() throws {
        let dir = try Fixture.library("advice_whoami", soname: "whoami", flags: ["-I", Paths.root + "/Sources/CPreload/include"])
        let (r, _) = try runHost(rule: Self.getppidRule(dir + "/libwhoami.so", "whoami_getppid"))
        #expect(r.stdout == "child: 4242 parent: 4242\n", "\(r)")
        #expect(r.stderr.contains("whoami: /proc/self/fd/"), "loaded by its descriptor's name: \(r)")
    }

    /// dlsym also searches an object's dependencies: a function the object does not define
    /// itself (here defined by a library it links) is not called.
    @Test func aCallTargetIsOnlyTheObjectsOwnDefinition() throws {
        let dir = try objectDirectory()
        defer { TableSegments.removeScratch(dir) }
        let object = dir + "/libadvice.so"
        try FileManager.default.copyItem(atPath: try Self.probe(), toPath: object)
        let include = Paths.root + "/Sources/CPreload/include"
        try #"#include <aspects_advice.h>\#nvoid probe_getppid_4242(aspects_invocation *inv) { aspects_set_return_int(inv, 4242); }\#n"#
            .write(toFile: dir + "/helper.c", atomically: true, encoding: .utf8)
        try "#include <aspects_advice.h>\nint nothing_here(void) { return 0; }\n".write(toFile: dir + "/empty.c", atomically: true, encoding: .utf8)
        let (r, events) = try runHost(rule: Self.getppidRule(object)) {
            // the object, rebuilt without the function, linking a library that has it
            let helper = try Proc.run("/usr/bin/env", ["cc", "-shared", "-fPIC", "-I", include, "-o", dir + "/libhelper.so", dir + "/helper.c"])
            try #require(helper.status == 0, "\(helper)")
            let empty = try Proc.run("/usr/bin/env", ["cc", "-shared", "-fPIC", "-I", include, "-o", dir + "/new.so", dir + "/empty.c",
                                                       "-Wl,--no-as-needed", "-L", dir, "-lhelper", "-Wl,-rpath," + dir])
            try #require(empty.status == 0, "\(empty)")
            try #require(rename(dir + "/new.so", object) == 0)
        }
        #expect(AdviceCodeTests.forkRanUnadvised(stdout: r.stdout, stderr: r.stderr), "\(r)")
        #expect(r.stderr.contains("libaspects: advice object \(object) does not define probe_getppid_4242 itself"), "\(r)")
        #expect(!events.isEmpty && events.allSatisfy { $0.kind == "unavailable" }, "\(events)")
    }

    /// `add` and `check` warn, for everyone, when someone else could change the object.
    @Test func addAndCheckWarnWhenOthersCouldChangeTheObject() throws {
        let dir = try objectDirectory()
        defer { TableSegments.removeScratch(dir) }
        let open = dir + "/open"
        try FileManager.default.createDirectory(atPath: open, withIntermediateDirectories: true)
        chmod(open, 0o777)
        try FileManager.default.copyItem(atPath: try Self.probe(), toPath: open + "/libprobe.so")
        try FileManager.default.copyItem(atPath: try Self.probe(), toPath: dir + "/libprobe.so")
        let t = try ScratchTable()
        let warned = try Proc.aspectctl(["add", "--table", t.name, "--rule", Self.getppidRule(open + "/libprobe.so")])
        #expect(warned.status == 0, "\(warned)")
        #expect(warned.stderr.contains("aspectctl: warning: rule \"pp\": its advice object \(open)/libprobe.so could be changed by someone else: \(open) is writable by group or others"), "\(warned)")
        let checked = try Proc.aspectctl(["check", "--rule", Self.getppidRule(open + "/libprobe.so")])
        #expect(checked.status == 0 && checked.stderr.contains("could be changed by someone else"), "\(checked)")
        let other = try ScratchTable()
        let quiet = try Proc.aspectctl(["add", "--table", other.name, "--rule", Self.getppidRule(dir + "/libprobe.so")])
        #expect(quiet.status == 0 && !quiet.stderr.contains("warning"), "\(quiet)")
    }
}
