import Foundation
import Testing
import AspectsCore
import AspectsRules

/// `aspectctl events` as a test reads it: arguments in the program's terms, one JSON shape
/// per line (config/events.schema.json), and a cursor so each test case reads its own events.
@Suite struct EventsOutputTests {
    static let schema = try! JSONParser.parse(try! String(contentsOfFile: Paths.root + "/config/events.schema.json", encoding: .utf8))

    func jsonLines(_ text: String) throws -> [JSONNode] {
        try text.split(separator: "\n").map { line in
            let node = try JSONParser.parse(String(line))
            #expect(SchemaValidator(root: Self.schema).validate(node).isEmpty, "\(line): \(SchemaValidator(root: Self.schema).validate(node))")
            return node
        }
    }

    func str(_ n: JSONNode, _ k: String) -> String? { if case .string(let s)? = n[k]?.value { return s }; return nil }
    func int(_ n: JSONNode, _ k: String) -> UInt64? { if case .number(let s)? = n[k]?.value { return UInt64(s) }; return nil }
    func args(_ n: JSONNode) -> [String] {
        guard case .array(let a)? = n["args"]?.value else { return [] }
        return a.compactMap { if case .string(let s) = $0.value { return s }; return nil }
    }

    @Test(.tags(.fast)) func flagsByNameAsStraceWritesThem() throws {
        let c = Catalog.builtIn
        let open = try #require(c.flagSets["open"]), sock = try #require(c.flagSets["sock"])
        let af = try #require(c.flagSets["af"]), msg = try #require(c.flagSets["msg"])
        #expect(open.render(0) == "O_RDONLY")
        #expect(open.render(0o1101) == "O_WRONLY|O_CREAT|O_TRUNC")
        #expect(open.render(0o2000000) == "O_RDONLY|O_CLOEXEC")
        #expect(open.render(0o4010002) == "O_RDWR|O_SYNC")          // O_SYNC holds O_DSYNC's bit
        #expect(open.render(0o20200002) == "O_RDWR|O_TMPFILE")        // and O_TMPFILE O_DIRECTORY's
        #expect(open.render(0o1 | 0x40000000) == "O_WRONLY|0x40000000") // a bit no flag names
        #expect(sock.render(1 | 0o2000000) == "SOCK_STREAM|SOCK_CLOEXEC")
        #expect(af.render(10) == "AF_INET6" && af.render(1) == "AF_UNIX")
        #expect(msg.render(0x4040) == "MSG_NOSIGNAL|MSG_DONTWAIT" || msg.render(0x4040) == "MSG_DONTWAIT|MSG_NOSIGNAL")
        #expect(msg.render(0) == "0x0")
    }

    @Test(.tags(.realPrograms)) func eventsShowFlagsAndModesAndEachCaseReadsItsOwn() throws {
        let t = try ScratchTable()
        try t.add(#"{"id":"o","symbol":"open","position":"before","action":{"log":true}}"#)
        let dir = NSTemporaryDirectory() + "aspects-events-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { TableSegments.removeScratch(dir) }
        // "case 1": the shell creates a file (open with O_CREAT and a mode)
        let one = try Proc.run("/bin/sh", ["-c", "echo x > \(dir)/a"], environment: Proc.preload(table: t.name))
        #expect(one.status == 0)
        let first = try jsonLines(try Proc.aspectctl(["events", "--table", t.name, "--json"]).stdout)
        let create = try #require(first.first { args($0).first == "\"\(dir)/a\"" })
        #expect(args(create).dropFirst().first == "O_WRONLY|O_CREAT|O_TRUNC" && args(create).last == "0666", "\(args(create))")

        // --clear: the next `events` starts after everything so far
        let cleared = try jsonLines(try Proc.aspectctl(["events", "--table", t.name, "--clear", "--json"]).stdout)
        #expect(cleared.count == 1 && str(cleared[0], "kind") == "cleared")
        let next = try #require(int(cleared[0], "next"))
        #expect(next == first.compactMap { int($0, "index") }.max()! + 1)
        // "case 2": cat opens read-only: no mode is shown (none is passed without O_CREAT)
        let two = try Proc.run("/bin/cat", ["\(dir)/a"], environment: Proc.preload(table: t.name))
        #expect(two.status == 0)
        let second = try jsonLines(try Proc.aspectctl(["events", "--table", t.name, "--json"]).stdout)
        #expect(!second.isEmpty && second.allSatisfy { (int($0, "index") ?? 0) >= next }, "only case 2's events")
        let read = try #require(second.first { args($0).first == "\"\(dir)/a\"" })
        #expect(args(read).count == 2 && args(read)[1] == "O_RDONLY", "\(args(read))")
        // --since an index gives the history from there, whatever the cursor
        let all = try jsonLines(try Proc.aspectctl(["events", "--table", t.name, "--json", "--since", "0"]).stdout)
        #expect(all.count == first.count + second.count)
        #expect(try Proc.aspectctl(["events", "--table", t.name, "--clear", "--follow"]).status == 64)
    }

    @Test func anOverrunRingSaysHowManyWereLostInTheSameShape() throws {
        let t = try ScratchTable(events: 16)
        try t.add(#"{"symbol":"malloc","position":"before","action":{"log":true}}"#)
        let r = try Proc.run(try Fixture.build("malloc_nth"), ["100"], environment: Proc.preload(table: t.name))
        #expect(r.status == 0)
        let lines = try jsonLines(try Proc.aspectctl(["events", "--table", t.name, "--json"]).stdout)
        let dropped = try #require(lines.first)
        #expect(str(dropped, "kind") == "dropped" && int(dropped, "index") == 0, "\(lines.first!)")
        let lost = try #require(int(dropped, "count"))
        let events = lines.dropFirst()
        #expect(events.count == 16 && events.allSatisfy { str($0, "kind") == "fired" })
        // the lost ones and the kept ones are every call, without a gap
        #expect(int(events.first!, "index") == lost && lost + 16 == t.table.eventHead)
    }
}
