import Foundation
import Testing
import AspectsTable

/// `create --share-with-group G`: the one way a table is obeyed by processes of another user —
/// a member of G, when the file is 0660 and G's and its header says it was created shared.
/// Runs programs as another uid with setpriv (needs root, as CI and this machine have).
@Suite(.serialized, .tags(.realPrograms)) struct SharedTableTests {
    static let canSwitchUsers = geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")
    /// Root's own group: a table is shared only with a group its owner is a member of.
    static let gid: UInt32 = 0, uid = "65534"

    /// libaspects.so where any user can read it (a checkout may sit in a private home).
    static func readableLibrary() throws -> String {
        let dir = NSTemporaryDirectory() + "aspects-shared-lib-\(getpid())"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        let lib = dir + "/libaspects.so"
        if !FileManager.default.fileExists(atPath: lib) { try FileManager.default.copyItem(atPath: Paths.library, toPath: lib) }
        chmod(lib, 0o644)
        return lib
    }

    func cat(as groups: [String], table: String) throws -> Outcome {
        try Proc.run("/usr/bin/setpriv", ["--reuid=\(Self.uid)", "--regid=\(Self.uid)"] + groups + ["--", "/usr/bin/env",
                     "LD_PRELOAD=\(try Self.readableLibrary())", "ASPECTS_TABLE=\(table)", "ASPECTS_STRICT=1", "/bin/cat", "/etc/hostname"])
    }

    static let hide = #"{"symbol":"open","position":"instead","action":{"fail":"ENOENT"},"when":{"args":[{"arg":0,"glob":"/etc/hostname"}]}}"#

    @Test(.requires(canSwitchUsers, "needs root and setpriv"))
    func membersOfTheGroupAreAdvisedAndNoOneElse() throws {
        let name = "test-shared-\(getpid())"
        defer { _ = try? Proc.aspectctl(["destroy", "--table", name]) }
        let made = try Proc.aspectctl(["create", "--table", name, "--share-with-group", String(Self.gid)])
        #expect(made.status == 0 && made.stdout.contains("shared with group \(Self.gid)"), "\(made)")
        var st = stat()
        #expect(lstat("/dev/shm/aspects." + name, &st) == 0 && st.st_mode & 0o7777 == 0o660 && st.st_gid == Self.gid)
        #expect(try Proc.aspectctl(["add", "--table", name, "--rule", Self.hide]).status == 0)
        let member = try cat(as: ["--groups=\(Self.gid)"], table: name)
        #expect(member.status == 1 && member.stderr.contains("No such file or directory"), "a member is advised: \(member)")
        let stranger = try cat(as: ["--clear-groups"], table: name)
        #expect(stranger.status == 0 && stranger.stderr.contains("is owned by another user - advice is off"), "\(stranger)")
        #expect(try TableName(name).path.hasPrefix("/dev/shm/"))
        #expect(try AdviceTable.open(TableName(name)).attachments().count == 1, "only the member attached")
    }

    /// Group-writable without having been created shared: nobody obeys it, the owner neither.
    @Test(.requires(canSwitchUsers, "needs root and setpriv"))
    func aTableMadeGroupWritableByHandIsRefused() throws {
        let name = "test-unshared-\(getpid())"
        defer { _ = try? Proc.aspectctl(["destroy", "--table", name]) }
        #expect(try Proc.aspectctl(["create", "--table", name]).status == 0)
        #expect(try Proc.aspectctl(["add", "--table", name, "--rule", Self.hide]).status == 0)
        let path = "/dev/shm/aspects." + name
        #expect(chown(path, uid_t.max, Self.gid) == 0 && chmod(path, 0o660) == 0)
        let member = try cat(as: ["--groups=\(Self.gid)"], table: name)
        #expect(member.status == 0 && member.stderr.contains("advice is off"), "\(member)")
        let owner = try Proc.aspectctl(["list", "--table", name])
        #expect(owner.status != 0 && owner.stderr.contains("writable by group or others"), "\(owner)")
    }
}
