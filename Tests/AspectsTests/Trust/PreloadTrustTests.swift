import Foundation
import Testing

/// The trust rule as the preload applies it (aspects_trust.h): a process obeys only a table
/// that is a regular file of its own euid, not writable by group or others, reached without
/// symbolic links; and none at all in secure-execution mode. Each refused table leaves the
/// program unadvised and says why with ASPECTS_DEBUG.
@Suite(.tags(.realPrograms)) struct PreloadTrustTests {
    static let isRoot = geteuid() == 0
    static let failHostname = #"{"symbol":"open","position":"instead","action":{"fail":"ENOENT"},"when":{"args":[{"arg":0,"glob":"/etc/hostname"}]}}"#

    /// cat /etc/hostname under the preload with `table` named; its exit status and stderr.
    func catHostname(table: String) throws -> Outcome {
        try Proc.run("/bin/cat", ["/etc/hostname"], environment: Proc.preload(table: table).merging(["ASPECTS_DEBUG": "1"]) { $1 })
    }

    @Test func anOwnPrivateTableIsObeyed() throws {
        let t = try ScratchTable()
        try t.add(Self.failHostname)
        let r = try catHostname(table: t.name)
        #expect(r.status == 1, "\(r)")
        #expect(r.stderr.contains("libaspects: attached table \(t.name)"), "\(r)")
    }

    @Test func aTableWritableByOthersIsIgnored() throws {
        let t = try ScratchTable()
        try t.add(Self.failHostname)
        for mode: mode_t in [0o666, 0o620, 0o602] {
            #expect(chmod(t.name, mode) == 0)
            let r = try catHostname(table: t.name)
            #expect(r.status == 0, "mode \(String(mode, radix: 8)): \(r)")
            #expect(r.stderr.contains("libaspects: table \(t.name) is writable by group or others; ignored (pass-through)"), "\(r)")
        }
    }

    @Test(.requires(isRoot, "only root can give a file to another user"))
    func aTableOwnedByAnotherUserIsIgnoredEvenByRoot() throws {
        let t = try ScratchTable()
        try t.add(Self.failHostname)
        #expect(chown(t.name, 65534, 65534) == 0)
        let r = try catHostname(table: t.name)
        #expect(r.status == 0, "\(r)")
        #expect(r.stderr.contains("libaspects: table \(t.name) is owned by another user; ignored (pass-through)"), "\(r)")
    }

    @Test func aTableReachedThroughASymbolicLinkIsIgnored() throws {
        let t = try ScratchTable()
        try t.add(Self.failHostname)
        // a link to the table, and a link to its directory
        let fileLink = t.directory + "/link-to-table", dirLink = t.directory + "-dirlink"
        try FileManager.default.createSymbolicLink(atPath: fileLink, withDestinationPath: t.name)
        try FileManager.default.createSymbolicLink(atPath: dirLink, withDestinationPath: t.directory)
        defer { TableSegments.removeScratch(dirLink) }
        for path in [fileLink, dirLink + "/table"] {
            let r = try catHostname(table: path)
            #expect(r.status == 0, "\(path): \(r)")
            #expect(r.stderr.contains("libaspects: table \(path) is reached through a symbolic link; ignored (pass-through)"), "\(r)")
        }
    }

    @Test func devicesAndFifosAreNeverOpened() throws {
        // /dev/zero would read as a table of zeros; a FIFO would block an open for reading.
        let dir = NSTemporaryDirectory() + "aspects-fifo-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { TableSegments.removeScratch(dir) }
        #expect(mkfifo(dir + "/fifo", 0o600) == 0)
        for path in ["/dev/zero", dir + "/fifo", dir] {
            let r = try catHostname(table: path)
            #expect(r.status == 0, "\(path): \(r)")
            #expect(r.stderr.contains("libaspects: table \(path) is not a regular file; ignored (pass-through)"), "\(r)")
        }
    }

    /// setgid to another group: the kernel starts the program in secure-execution mode
    /// (AT_SECURE), where the environment is the caller's, not the program owner's.
    @Test(.requires(isRoot, "needs a setgid program of another group"))
    func secureExecutionModeIgnoresTheTable() throws {
        let t = try ScratchTable()
        try t.add(Self.failHostname)
        let dir = t.directory + "/setgid"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        #expect(chmod(t.directory, 0o755) == 0 && chmod(dir, 0o755) == 0)
        let cat = dir + "/cat"
        try FileManager.default.copyItem(atPath: "/bin/cat", toPath: cat)
        #expect(chown(cat, 0, 65534) == 0 && chmod(cat, 0o2755) == 0)
        // glibc loads LD_PRELOAD libraries in secure mode only from its system directories
        // and only when they are setuid themselves: name it there as an ordinary user would
        // not be able to; here root places a copy, so that the preload does run and must
        // decide by itself.
        let lib = "/usr/lib/libaspects-securetest-\(UUID().uuidString).so"
        try FileManager.default.copyItem(atPath: Paths.library, toPath: lib)
        defer { TableSegments.removeScratch(lib) }
        #expect(chmod(lib, 0o4755) == 0)
        let r = try Proc.run(cat, ["/etc/hostname"], environment: ["LD_PRELOAD": (lib as NSString).lastPathComponent, "ASPECTS_TABLE": t.name, "ASPECTS_DEBUG": "1"])
        #expect(r.status == 0, "\(r)")
        #expect(r.stderr.contains("secure-execution mode (AT_SECURE): ASPECTS_TABLE is ignored"), "\(r)")
    }
}
