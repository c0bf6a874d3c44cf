import Foundation
import Testing

/// Rules files as users hand them over: pipes, FIFOs, /dev/stdin, process substitution and
/// "-" are read like files; a directory, a missing file and bytes that are not UTF-8 say what
/// is wrong (issue 10, item 9).
@Suite struct RulesInputTests {
    static let rule = #"[{"symbol":"write","position":"instead","action":{"fail":"ENOSPC"},"when":{"nth":3}}]"#

    @Test func standardInputAndItsNames() throws {
        for name in ["-", "/dev/stdin"] {
            let r = try Proc.run(Paths.aspectctl, ["check", "--rules", name], stdin: Self.rule)
            #expect(r.status == 0, "\(name): \(r)")
        }
        let sub = try Proc.run("/bin/bash", ["-c", "\"$0\" check --rules <(printf '%s' \"$1\")", Paths.aspectctl, Self.rule])
        #expect(sub.status == 0, "process substitution: \(sub)")
    }

    @Test func aFIFOIsReadLikeAFile() throws {
        let dir = NSTemporaryDirectory() + "aspects-fifo-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { TableSegments.removeScratch(dir) }
        let fifo = dir + "/rules"
        #expect(mkfifo(fifo, 0o600) == 0)
        let writer = try Proc.start("/bin/sh", ["-c", "printf '%s' \"$1\" > \"$0\"", fifo, Self.rule])
        let r = try Proc.run(Paths.aspectctl, ["check", "--rules", fifo])
        writer.wait()
        #expect(r.status == 0, "\(r)")
    }

    @Test func whatIsNotARulesFileSaysWhy() throws {
        let dir = NSTemporaryDirectory() + "aspects-input-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { TableSegments.removeScratch(dir) }
        let d = try Proc.run(Paths.aspectctl, ["check", "--rules", dir])
        #expect(d.status == 66 && d.stderr.contains("is a directory; --rules takes a JSON file"), "\(d)")
        let missing = try Proc.run(Paths.aspectctl, ["check", "--rules", dir + "/nope.json"])
        #expect(missing.status == 66 && missing.stderr.contains("there is no such file"), "\(missing)")
        let bad = dir + "/latin1.json"
        try Data([0x5b, 0x0a, 0x7b, 0x22, 0xe9, 0x22, 0x7d, 0x5d]).write(to: URL(fileURLWithPath: bad))
        let latin = try Proc.run(Paths.aspectctl, ["check", "--rules", bad])
        #expect(latin.status == 65, "\(latin)")
        #expect(latin.stderr.contains("not UTF-8") && latin.stderr.contains("0xe9 at byte offset 4") && latin.stderr.contains("latin1.json:2"), "\(latin)")
    }
}
