import Foundation
import Testing
import CAspectsABI

/// aspectctl applies the preload's trust rule to every table it opens, creates tables
/// atomically with mode 0600, and removes only tables of its own (issue 10, items 1 and 4).
@Suite struct TableFileTests {
    static let isRoot = geteuid() == 0

    func scratchDir() throws -> String {
        let dir = NSTemporaryDirectory() + "aspects-tablefile-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    func mode(_ path: String) -> mode_t {
        var st = stat()
        return stat(path, &st) == 0 ? st.st_mode & 0o7777 : 0
    }

    @Test func aNewTableIsPrivateWhateverTheUmask() throws {
        let dir = try scratchDir()
        defer { TableSegments.removeScratch(dir) }
        for mask: mode_t in [0, 0o022, 0o077, 0o277] {
            let path = dir + "/t\(mask)"
            // The umask of aspectctl only (the test process's is shared by every test).
            let r = try Proc.run("/bin/sh", ["-c", "umask \(String(mask, radix: 8)) && exec \"$0\" create --table \"$1\"", Paths.aspectctl, path])
            #expect(r.status == 0, "\(r)")
            #expect(mode(path) == 0o600, "umask \(String(mask, radix: 8)): mode \(String(mode(path), radix: 8))")
        }
        // Nothing but the tables: the private file each was built in is gone.
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).sorted() == ["t0", "t18", "t191", "t63"])
    }

    @Test func createNeverTakesOrBlamesAFileThatIsThere() throws {
        let dir = try scratchDir()
        defer { TableSegments.removeScratch(dir) }
        let notes = dir + "/notes"
        try "keep me\n".write(toFile: notes, atomically: true, encoding: .utf8)
        let r = try Proc.aspectctl(["create", "--table", notes])
        #expect(r.status == 73, "\(r)")
        #expect(r.stderr.contains("already exists and is not an aspects table") && !r.stderr.contains("destroy"), "\(r)")
        #expect(try String(contentsOfFile: notes, encoding: .utf8) == "keep me\n")
        let table = dir + "/table"
        #expect(try Proc.aspectctl(["create", "--table", table]).status == 0)
        let again = try Proc.aspectctl(["create", "--table", table])
        #expect(again.status == 73 && again.stderr.contains("table \"\(table)\" already exists"), "\(again)")
    }

    @Test(.requires(isRoot, "only root can give a file to another user"))
    func createAndOpenSayWhoseATableIs() throws {
        let dir = try scratchDir()
        defer { TableSegments.removeScratch(dir) }
        let table = dir + "/theirs"
        #expect(try Proc.aspectctl(["create", "--table", table]).status == 0)
        #expect(chown(table, 65534, 65534) == 0)
        let create = try Proc.aspectctl(["create", "--table", table])
        #expect(create.stderr.contains("already exists and belongs to uid 65534, not to you"), "\(create)")
        let add = try Proc.aspectctl(["add", "--table", table, "--rule", #"{"symbol":"write","position":"before","action":{"log":true}}"#])
        #expect(add.status == 65, "\(add)")
        #expect(add.stderr.contains("belongs to uid 65534, not to you (uid 0)"), "\(add)")
        let destroy = try Proc.aspectctl(["destroy", "--table", table])
        #expect(destroy.status != 0 && FileManager.default.fileExists(atPath: table), "\(destroy)")
    }

    @Test func aTableOthersCanWriteOrReachedByALinkIsNotUsed() throws {
        let dir = try scratchDir()
        defer { TableSegments.removeScratch(dir) }
        let table = dir + "/table"
        #expect(try Proc.aspectctl(["create", "--table", table]).status == 0)
        #expect(chmod(table, 0o666) == 0)
        let open = try Proc.aspectctl(["list", "--table", table])
        #expect(open.status == 65 && open.stderr.contains("is writable by group or others") && open.stderr.contains("chmod 600"), "\(open)")
        #expect(chmod(table, 0o600) == 0)
        let link = dir + "/link"
        #expect(symlink(table, link) == 0)
        let viaLink = try Proc.aspectctl(["list", "--table", link])
        #expect(viaLink.status == 65 && viaLink.stderr.contains("is reached through a symbolic link"), "\(viaLink)")
        #expect(try Proc.aspectctl(["list", "--table", table]).status == 0)
    }

    @Test func destroyRemovesOnlyTablesOfOurOwn() throws {
        let dir = try scratchDir()
        defer { TableSegments.removeScratch(dir) }
        let notes = dir + "/notes", table = dir + "/table", link = dir + "/link", sub = dir + "/sub"
        try "keep me\n".write(toFile: notes, atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: sub, withIntermediateDirectories: true)
        #expect(try Proc.aspectctl(["create", "--table", table]).status == 0)
        #expect(symlink(table, link) == 0)
        for (path, says) in [(notes, "is not an aspects table"), ("/dev/null", "is not a regular file"), (sub, "is not a regular file"),
                             (link, "symbolic link"), (dir + "/missing", "there is no table")] {
            let r = try Proc.aspectctl(["destroy", "--table", path])
            #expect(r.status != 0 && r.stderr.contains(says), "\(path): \(r)")
        }
        #expect(try String(contentsOfFile: notes, encoding: .utf8) == "keep me\n")
        #expect(FileManager.default.fileExists(atPath: "/dev/null") && FileManager.default.fileExists(atPath: sub))
        #expect(FileManager.default.fileExists(atPath: table))
        let ok = try Proc.aspectctl(["destroy", "--table", table])
        #expect(ok.status == 0 && !FileManager.default.fileExists(atPath: table), "\(ok)")
    }

    @Test func aTableOfAnotherABIVersionCanStillBeDestroyed() throws {
        let t = try ScratchTable()
        try TableSegments.write(t.name, UInt32(1), at: MemoryLayout<aspects_table_header>.offset(of: \aspects_table_header.abi_version)!)
        let list = try Proc.aspectctl(["list", "--table", t.name])
        #expect(list.status == 65 && list.stderr.contains("ABI version 1"), "\(list)")
        let r = try Proc.aspectctl(["destroy", "--table", t.name])
        #expect(r.status == 0 && !FileManager.default.fileExists(atPath: t.name), "\(r)")
    }
}
