import Foundation
import Testing
import AspectsCore

/// Every JSON aspectctl prints has a schema in config/, and what it prints fits it: a test
/// suite can rely on the shape. (explore, events and run --report-json are checked where
/// those commands are tested.)
@Suite struct OutputSchemaTests {
    func schema(_ name: String) throws -> SchemaValidator {
        SchemaValidator(root: try JSONParser.parse(try String(contentsOfFile: Paths.root + "/config/\(name).schema.json", encoding: .utf8)))
    }

    func validate(_ output: Outcome, against name: String) throws {
        let doc = try JSONParser.parse(output.stdout)
        let problems = try schema(name).validate(doc)
        #expect(problems.isEmpty, "\(name): \(problems)\n\(output.stdout)")
    }

    @Test(.tags(.realPrograms)) func listStatsAndCheckFitTheirSchemas() throws {
        let t = try ScratchTable()
        try t.add(#"""
        [{"id":"p","symbol":"read","position":"instead","action":{"fail":["EIO","EINTR"]},"when":{"probability":0.25}},
         {"id":"f","family":"write","position":"before","action":{"log":true},"when":{"args":[{"arg":0,"fdpath":"*.img"}]}},
         {"id":"gone","symbol":"close","position":"before","action":{"log":true}},
         {"id":"x","symbol":"fx_add","prototype":"int fx_add(int a, int b)","position":"instead","action":{"return":1}}]
        """#)
        _ = try Proc.run("/bin/cat", ["/etc/hostname"], environment: Proc.preload(table: t.name))
        try t.table.remove(ids: ["gone"])
        try validate(try Proc.aspectctl(["list", "--table", t.name, "--json"]), against: "list")
        try validate(try Proc.aspectctl(["list", "--table", t.name, "--json", "--all"]), against: "list")
        try validate(try Proc.aspectctl(["stats", "--table", t.name, "--json"]), against: "stats")
        let bad = try Proc.aspectctl(["check", "--json", "--rule", #"{"symbol":"x","position":"instead","action":{"fail":true}}"#,
                                      "--rule", #"{"symbol":"write","position":"around","action":{"fail":true}}"#])
        #expect(bad.status == 65)
        try validate(bad, against: "check")
        try validate(try Proc.aspectctl(["check", "--json", "--rule", #"{"symbol":"read","position":"instead","action":{"fail":true}}"#]), against: "check")
    }

    @Test func tablesFitsItsSchema() throws {
        let name = "test-schema-\(getpid())"
        defer { _ = try? Proc.aspectctl(["destroy", "--table", name]) }
        #expect(try Proc.aspectctl(["create", "--table", name]).status == 0)
        let out = try Proc.aspectctl(["tables", "--json"])
        #expect(out.stdout.contains(name))
        try validate(out, against: "tables")
    }
}
