import Foundation
import Testing
import CAspectsABI
import AspectsTable

/// Nothing injected must be visible: every process that attaches a table leaves a record, a
/// process that finds its own table unusable counts itself in the table's header, and
/// ASPECTS_STRICT makes a process that gets no advice say why on stderr.
@Suite struct AttachmentTests {
    static let failHostname = #"{"symbol":"open","position":"instead","action":{"fail":"ENOENT"},"when":{"args":[{"arg":0,"glob":"/etc/hostname"}]}}"#

    @Test func everyAttachingProcessLeavesARecord() throws {
        let t = try ScratchTable()
        #expect(t.table.attachments().isEmpty)
        let r = try Proc.run("/bin/sh", ["-c", "/bin/cat /etc/hostname >/dev/null; echo $$"], environment: Proc.preload(table: t.name))
        #expect(r.status == 0, "\(r)")
        let shellPID = Int32(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        let a = t.table.attachments()
        // the shell, and cat (its child)
        #expect(a.count == 2, "\(a)")
        #expect(t.table.attachCount == 2)
        let shell = try #require(a.first { $0.pid == shellPID })
        #expect(shell.program.hasSuffix("sh"), "\(shell)")
        let cat = try #require(a.first { $0.program.hasSuffix("/cat") })
        #expect(cat.parentPID == shellPID)
        #expect(cat.hierarchy == shell.hierarchy && cat.hierarchy != 0)
        #expect(!cat.isRunning && !shell.isRunning)
        #expect(cat.uid == geteuid())
    }

    @Test func aRunningAttachedProcessIsSeenRunning() throws {
        let t = try ScratchTable()
        let bin = try Fixture.build("live_loop")
        let live = try LiveProcess(bin, ["/etc/hostname"], table: t.name)
        #expect(live.call() == "ok")
        let a = t.table.attachments()
        // The record keeps the end of the path (88 bytes): a clone in a deep directory, as CI
        // makes, gives a fixture path longer than that.
        #expect(a.count == 1 && a[0].isRunning, "\(a)")
        #expect(a.first.map { !$0.program.isEmpty && bin.hasSuffix($0.program) && ($0.program == bin || $0.program.utf8.count == 87) } == true, "\(a)")
        #expect(try live.finish() == 0)
        #expect(t.table.attachments().first?.isRunning == false)
    }

    @Test(.tags(.realPrograms)) func aProcessRefusingItsOwnTableCountsItselfThere() throws {
        let t = try ScratchTable()
        try t.add(Self.failHostname)
        // Another ABI version: the owner's table, trusted, but not one this preload reads.
        let offset = MemoryLayout<aspects_table_header>.offset(of: \aspects_table_header.abi_version)!
        try TableSegments.write(t.name, ASPECTS_ABI_VERSION + 1, at: offset)
        let r = try Proc.run("/bin/cat", ["/etc/hostname"], environment: Proc.preload(table: t.name))
        #expect(r.status == 0, "\(r)")
        let f = try #require(AttachFailures.read(try TableName(t.name)))
        #expect(f.count == 1)
        #expect(f.lastPID > 0)
        #expect(f.lastReason == "the table was written for another ABI version")
    }

    @Test(.tags(.realPrograms)) func strictModeSaysOnceWhyThereIsNoAdvice() throws {
        let t = try ScratchTable()
        try t.add(Self.failHostname)
        #expect(chmod(t.name, 0o666) == 0)
        let strict = try Proc.run("/bin/cat", ["/etc/hostname"], environment: Proc.preload(table: t.name).merging(["ASPECTS_STRICT": "1"]) { $1 })
        #expect(strict.status == 0)
        let lines = strict.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(strict)")
        #expect(lines.first?.hasPrefix("libaspects: pid ") == true)
        #expect(lines.first?.hasSuffix(": table \(t.name) is writable by group or others - advice is off in this process (ASPECTS_STRICT)") == true, "\(strict)")
        // Without it: silent, as a host's stderr must be.
        let quiet = try Proc.run("/bin/cat", ["/etc/hostname"], environment: Proc.preload(table: t.name))
        #expect(quiet.stderr.isEmpty, "\(quiet)")
        // A typo in the table's name, and no table at all.
        let typo = try Proc.run("/bin/true", [], environment: Proc.preload(table: t.name + "-typo").merging(["ASPECTS_STRICT": "1"]) { $1 })
        #expect(typo.stderr.contains(": table \(t.name)-typo does not exist - advice is off"), "\(typo)")
        let none = try Proc.run("/bin/true", [], environment: Proc.preload(table: nil).merging(["ASPECTS_STRICT": "1"]) { $1 })
        #expect(none.stderr.contains(": ASPECTS_TABLE is not set - advice is off in this process (ASPECTS_STRICT)"), "\(none)")
        // An attached process says nothing.
        #expect(chmod(t.name, 0o600) == 0)
        let ok = try Proc.run("/bin/cat", ["/etc/hostname"], environment: Proc.preload(table: t.name).merging(["ASPECTS_STRICT": "1"]) { $1 })
        #expect(ok.status == 1 && !ok.stderr.contains("libaspects"), "\(ok)")
    }
}
