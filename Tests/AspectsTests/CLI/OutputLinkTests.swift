import Foundation
import Testing
import CAspectsABI

/// An output never follows a final symbolic link someone else
/// planted (the kernel's protected_symlinks rule, everywhere), every output is checked before
/// anything runs and opened only once there is something to write, and a report that does not
/// fit on its file system leaves no cut file behind.
@Suite struct OutputLinkTests {
    static let isRoot = geteuid() == 0
    static let other: uid_t = 65534

    /// A sticky, world-writable directory, as /tmp is, and a file of root's only root can read.
    func stickyDirectory() throws -> (dir: String, secret: String) {
        let dir = NSTemporaryDirectory() + "aspects-links-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        chmod(dir, 0o1777)
        let secret = dir + "/secret"
        try "root's own\n".write(toFile: secret, atomically: false, encoding: .utf8)
        chmod(secret, 0o600)
        return (dir, secret)
    }

    /// A symbolic link at `link` to `target`, owned by `uid` (what that user would plant).
    func plant(_ link: String, to target: String, owner uid: uid_t) throws {
        try #require(symlink(target, link) == 0 && lchown(link, uid, uid) == 0)
    }

    func run(_ args: [String]) throws -> Outcome {
        try Proc.aspectctl(["run"] + args, environment: ["ASPECTS_PRELOAD": Paths.library])
    }

    @Test(.enabled(if: isRoot, "needs root to plant another user's link"))
    func aLinkSomeoneElsePlantedIsNotFollowed() throws {
        let (dir, secret) = try stickyDirectory()
        defer { TableSegments.removeScratch(dir) }
        let ran = dir + "/ran"
        for option in ["--report-json", "--report-file"] {
            let link = dir + "/report" + option
            try plant(link, to: secret, owner: Self.other)
            let r = try run([option, link, "--rule", OutputSafetyTests.neverMatches, "--", "/usr/bin/touch", ran])
            #expect(r.status == 125 && r.stderr.contains("\(option): \(link) is a symbolic link of user nobody (uid 65534), neither yours nor root's"), "\(option): \(r)")
            #expect(try String(contentsOfFile: secret, encoding: .utf8) == "root's own\n", "\(option): the file the link names is untouched")
            #expect(access(ran, F_OK) != 0, "\(option): refused before the command ran")
        }
        // a link of one's own (or root's) is followed, as before
        let mine = dir + "/mine.json"
        try plant(mine, to: dir + "/mine-target.json", owner: 0)
        try "".write(toFile: dir + "/mine-target.json", atomically: false, encoding: .utf8)
        let ok = try run(["--report-json", mine, "--rule", OutputSafetyTests.neverMatches, "--", "/bin/true"])
        let written = try String(contentsOfFile: dir + "/mine-target.json", encoding: .utf8)
        #expect(ok.status == 0 && written.hasPrefix("{"), "\(ok)")
    }

    @Test(.enabled(if: isRoot, "needs root to plant another user's link"))
    func exploreOutThroughSomeoneElsesLinkMakesNothing() throws {
        let (dir, _) = try stickyDirectory()
        defer { TableSegments.removeScratch(dir) }
        let victim = dir + "/victim"
        try FileManager.default.createDirectory(atPath: victim, withIntermediateDirectories: true)
        try plant(dir + "/out", to: victim, owner: Self.other)
        let r = try Proc.aspectctl(["explore", "--function", "unlink", "--max-runs", "1", "--out", dir + "/out", "--", "/bin/true"],
                                   environment: ["ASPECTS_PRELOAD": Paths.library])
        #expect(r.status != 0 && r.stderr.contains("--out: \(dir)/out is a symbolic link of user nobody (uid 65534)"), "\(r)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: victim).isEmpty, "nothing was made in the link's target")
    }

    /// A bad rule leaves the report file as it was: outputs are opened only once everything
    /// is validated (the report file used to be truncated before the rules were read).
    @Test func aBadRuleLeavesTheReportFileAlone() throws {
        let dir = NSTemporaryDirectory() + "aspects-links-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { TableSegments.removeScratch(dir) }
        let report = dir + "/report.txt"
        try "the last run's report\n".write(toFile: report, atomically: false, encoding: .utf8)
        let r = try run(["--report-file", report, "--rule", #"{"symbol":"no_such_function","position":"before","action":{"log":true}}"#, "--", "/bin/true"])
        #expect(r.status == 125 && r.stderr.contains("no_such_function"), "\(r)")
        #expect(try String(contentsOfFile: report, encoding: .utf8) == "the last run's report\n")
    }

    /// Item 10: a report that cannot be written is found before the command starts.
    @Test func aReportToAFIFOIsRefusedBeforeTheCommandRuns() throws {
        let dir = NSTemporaryDirectory() + "aspects-links-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { TableSegments.removeScratch(dir) }
        let fifo = dir + "/fifo", ran = dir + "/ran"
        #expect(mkfifo(fifo, 0o600) == 0)
        for path in [fifo, "/dev/null"] {
            let r = try run(["--report-json", path, "--rule", OutputSafetyTests.neverMatches, "--", "/usr/bin/touch", ran])
            #expect(r.status == 125 && r.stderr.contains("--report-json: \(path) is not a regular file"), "\(r)")
            #expect(access(ran, F_OK) != 0, "\(path): the command did not run")
        }
    }

    /// Item 13: a report that does not fit (here a file size limit: EFBIG, as ENOSPC on a full
    /// file system) leaves no cut file: a new one is removed, an existing one kept as it was,
    /// and the error gives the command's status.
    @Test func aReportThatDoesNotFitLeavesNoCutFile() throws {
        let dir = NSTemporaryDirectory() + "aspects-links-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { TableSegments.removeScratch(dir) }
        let fresh = dir + "/new.json", old = dir + "/old.json"
        try "the last run's report\n".write(toFile: old, atomically: false, encoding: .utf8)
        // each rule adds a few hundred bytes to the report; the limit is 4 KiB
        let rules = (0..<24).map { #"{"id":"padding-rule-number-\#($0)","symbol":"unlink","position":"before","action":{"log":true}}"# }
        let args = rules.flatMap { ["--rule", $0] }
        for (path, fate) in [(fresh, "the partial file was removed"), (old, "nothing was written: \(old) is as it was")] {
            let script = "trap '' XFSZ; ulimit -f 4; exec \"$0\" \"$@\""
            let r = try Proc.run("/bin/bash", ["-c", script, Paths.aspectctl, "run", "--report-json", path] + args + ["--", "/bin/sh", "-c", "exit 3"],
                                 environment: ["ASPECTS_PRELOAD": Paths.library])
            #expect(r.status == 125 && r.stderr.contains("--report-json: cannot write \(path)") && r.stderr.contains(fate)
                    && r.stderr.contains("ended with exit status 3"), "\(r)")
        }
        #expect(access(fresh, F_OK) != 0)
        #expect(try String(contentsOfFile: old, encoding: .utf8) == "the last run's report\n")
    }
}
