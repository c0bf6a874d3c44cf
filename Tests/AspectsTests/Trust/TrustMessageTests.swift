import Foundation
import Testing
import CAspectsABI
import AspectsRules

/// Trust refusals name what they are about.
@Suite struct TrustMessageTests {
    /// A relative advice object path is named whole in the refusal (it was cut to its
    /// first letter: "not loaded: l is not a usable absolute path").
    @Test(.tags(.fast)) func aRelativeObjectPathIsNamedWhole() throws {
        var fd: Int32 = -1
        var at: UInt32 = 0
        #expect(aspects_object_open("libadvice.so", geteuid(), 1, &fd, &at) == Int32(ASPECTS_TRUST_BAD_PATH.rawValue))
        #expect(at == UInt32("libadvice.so".utf8.count), "\(at)")
        let warning = AdviceObject.trustWarning("lib/advice.so") ?? ""
        #expect(warning.contains("lib/advice.so is not a usable absolute path"), "\(warning)")
    }

    /// The same in the preload: a process of root refuses an object named by a bare name the
    /// loader finds (its path is not absolute), and says so naming the whole name.
    @Test(.enabled(if: geteuid() == 0, "the guarded rule applies to every process of root"))
    func rootNamesTheWholeRelativeObjectPath() throws {
        let probe = try AdviceCodeTests.probe()
        let dir = (probe as NSString).deletingLastPathComponent
        let rule = #"{"id":"pp","symbol":"getppid","position":"instead","action":{"call":"libadvice_probe.so:probe_getppid_4242"}}"#
        let r = try Proc.run(Paths.aspectctl, ["run", "--rule", rule, "--", try AdviceCodeTests.host(), "fork"],
                             environment: ["ASPECTS_PRELOAD": Paths.library, "LD_LIBRARY_PATH": dir, "ASPECTS_DEBUG": "1"])
        #expect(r.stderr.contains("libaspects: advice object libadvice_probe.so not loaded: libadvice_probe.so is not a usable absolute path"), "\(r)")
    }

    /// A private table's anchor chmod'ed 0660 by hand, as if shared: a member, whom the
    /// segment's mode keeps out, is told of the mode mismatch, not of a lost segment.
    @Test(.tags(.realPrograms), .enabled(if: SharedTableTests.canSwitchUsers, "needs root and setpriv"))
    func aFileChmodedByHandIsAModeMismatchNotALostSegment() throws {
        let dir = NSTemporaryDirectory() + "aspects-chmod-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        chmod(dir, 0o1777)
        defer { TableSegments.removeScratch(dir) }
        let owner = ["--reuid=65534", "--regid=65534", "--clear-groups", "--"]
        let member = ["--reuid=4242", "--regid=4242", "--groups=65534", "--"]
        let table = dir + "/t"
        let made = try Proc.run("/usr/bin/setpriv", owner + [Paths.aspectctl, "create", "--table", table])
        try #require(made.status == 0, "\(made)")
        try #require(chmod(table, 0o660) == 0)
        let list = try Proc.run("/usr/bin/setpriv", member + [Paths.aspectctl, "list", "--table", table])
        #expect(list.status != 0 && list.stderr.contains("its file is mode 0660 of group") && list.stderr.contains("mode 0600 of group")
                && !list.stderr.contains("lost its shared memory segment"), "\(list)")
        let run = try Proc.run("/usr/bin/setpriv", member + ["/usr/bin/env", "LD_PRELOAD=\(try SharedTableTests.readableLibrary())",
                               "ASPECTS_TABLE=\(table)", "ASPECTS_STRICT=1", "/bin/true"])
        #expect(run.status == 0 && run.stderr.contains("table \(table) is writable by group or others - advice is off"), "\(run)")
        try #require(chmod(table, 0o600) == 0)
        _ = try Proc.run("/usr/bin/setpriv", owner + [Paths.aspectctl, "destroy", "--table", table])
    }
}
