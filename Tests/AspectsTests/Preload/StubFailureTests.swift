import Foundation
import Testing
import AspectsCore

/// A forwarding stub the preload could not build (libffi missing, or refusing a signature)
/// leaves rules on that function advising nothing. Only ASPECTS_DEBUG said so; now the
/// process's attachment record does, and `run` and `list` say it (issue 22, item 6).
@Suite struct StubFailureTests {
    /// A "libffi" that loads but defines none of libffi's functions: every stub fails.
    static func libffiWithoutFunctions() throws -> String {
        try Fixture.library("caller_lib", soname: "callerlib") + "/libcallerlib.so"
    }

    @Test func runSaysWhichStubCouldNotBeBuilt() throws {
        let rule = #"{"id":"w","symbol":"write","position":"instead","action":{"fail":"EIO"}}"#
        let json = NSTemporaryDirectory() + "stub-\(UUID().uuidString).json"
        defer { unlink(json) }
        let r = try Proc.aspectctl(["run", "--rule", rule, "--report-json", json, "--", "/bin/sh", "-c", "echo hi"],
                                   environment: ["ASPECTS_LIBFFI": try Self.libffiWithoutFunctions()])
        #expect(r.stdout == "hi\n", "the write was not advised: \(r)")
        #expect(r.stderr.contains("could not build the forwarding stub of write"), "\(r)")
        #expect(r.stderr.contains("ASPECTS_DEBUG=1 says which"), "\(r)")
        let doc = try JSONParser.parse(try String(contentsOfFile: json, encoding: .utf8))
        let schema = try JSONParser.parse(try String(contentsOfFile: Paths.root + "/config/run-report.schema.json", encoding: .utf8))
        #expect(SchemaValidator(root: schema).validate(doc).isEmpty)
        guard case .array(let attached)? = doc["attached"]?.value else { Issue.record("no attached: \(doc)"); return }
        #expect(attached.contains { (p: JSONNode) in p["stubFailures"]?.value == .number("1") }, "\(attached)")
    }

    @Test func listSaysItForANamedTable() throws {
        let t = try ScratchTable()
        try t.add(#"{"id":"w","symbol":"write","position":"instead","action":{"fail":"EIO"}}"#)
        var env = Proc.preload(table: t.name)
        env["ASPECTS_LIBFFI"] = try Self.libffiWithoutFunctions()
        let r = try Proc.run("/bin/sh", ["-c", "echo hi"], environment: env)
        #expect(r.stdout == "hi\n", "\(r)")
        let list = try Proc.aspectctl(["list", "--table", t.name])
        #expect(list.stdout.contains("warning: process") && list.stdout.contains("could not build the forwarding stub of write"), "\(list)")
        // a process that built its stubs says nothing
        let fine = try ScratchTable()
        try fine.add(#"{"id":"w","symbol":"write","position":"before","action":{"log":true}}"#)
        _ = try Proc.run("/bin/sh", ["-c", "echo hi"], environment: Proc.preload(table: fine.name))
        #expect(!(try Proc.aspectctl(["list", "--table", fine.name])).stdout.contains("forwarding stub"))
    }
}
