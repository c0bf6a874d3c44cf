import Foundation
import Testing
import AspectsCore
import AspectsRules
import AspectsTable

/// `list --json` carries each rule as the JSON it was added with (its id and drawn seed
/// written in), and `list --rules` prints a rules file `add` takes again: adding it to a fresh
/// table gives the same rules, the same ids, the same seeds.
@Suite struct ListRoundTripTests {
    static let ruleSchema = try! JSONParser.parse(try! String(contentsOfFile: Paths.root + "/config/rule.schema.json", encoding: .utf8))

    /// What makes two rules the same rule: everything list shows but the counts and times.
    func shape(_ r: TableRule) -> String {
        "\(r.id) \(r.state) \(r.symbol) \(r.position) \(r.actions) \(r.conditions) \(r.scope) \(r.seed.map(String.init) ?? "-")"
    }

    func roundTrip(_ rules: String) throws {
        let a = try ScratchTable(), b = try ScratchTable()
        let file = a.directory + "/rules.json"
        try rules.write(toFile: file, atomically: true, encoding: .utf8)
        let added = try Proc.aspectctl(["add", "--table", a.name, "--rules", file])
        #expect(added.status == 0, "\(added)")
        // --json: every rule has its JSON, valid by the rule schema
        let listed = try JSONParser.parse(try Proc.aspectctl(["list", "--table", a.name, "--json"]).stdout)
        guard case .array(let items) = listed.value else { Issue.record("not an array"); return }
        for item in items {
            let rule = try #require(item["rule"], "no rule JSON in \(item.value.rendered())")
            #expect(SchemaValidator(root: Self.ruleSchema).validate(rule).isEmpty, "\(rule.value.rendered())")
        }
        // --rules into a fresh table: the same rules
        let saved = try Proc.aspectctl(["list", "--table", a.name, "--rules"])
        #expect(saved.status == 0 && saved.stderr.isEmpty, "\(saved)")
        let again = try Proc.run(Paths.aspectctl, ["add", "--table", b.name, "--rules", "-"], stdin: saved.stdout)
        #expect(again.status == 0, "\(again)\n\(saved.stdout)")
        // (a rule on one function of a family gets its note again: FamilySuggestionTests)
        let notNotes = again.stderr.split(separator: "\n").filter { !$0.hasPrefix("aspectctl: note: ") }
        #expect(notNotes.isEmpty, "no seed drawn again: \(again.stderr)")
        #expect(a.table.rules().map(shape) == b.table.rules().map(shape), "\(saved.stdout)")
    }

    /// (The rules files, not the advice examples' directories: AdviceExamplesTests builds those.)
    @Test(arguments: try! FileManager.default.contentsOfDirectory(atPath: Paths.root + "/config/examples").filter { $0.hasSuffix(".json") }.sorted())
    func everyExampleComesBackTheSame(_ file: String) throws {
        try roundTrip(try String(contentsOfFile: Paths.root + "/config/examples/" + file, encoding: .utf8))
    }

    @Test(.tags(.realPrograms)) func theWholeRuleLanguageComesBackTheSame() throws {
        try roundTrip(#"""
        [
          {"symbol": "write", "position": "instead", "action": {"fail": "ENOSPC"}, "when": {"nth": 3}, "comment": "no id: generated"},
          {"id": "p", "symbol": "read", "position": "instead", "action": {"fail": ["EIO", "EINTR"]}, "when": {"probability": 0.25}},
          {"id": "o", "symbol": "open", "position": "instead", "action": {"fail": "EACCES"},
           "when": {"args": [{"arg": 0, "glob": "*.db"}, {"arg": 1, "mask": "O_CREAT|O_EXCL"}], "process": "*/sqlite3", "times": 2}, "autoRemove": false},
          {"id": "c", "symbol": "close", "action": {"fail": true}, "comment": "no position: the catalog's (after)"},
          {"id": "f", "symbol": "fsync", "position": "after", "action": {"fail": "EIO"}, "when": {"args": [{"arg": 0, "fdpath": "*-journal"}], "every": 2, "after": 1}, "scope": "hierarchy"},
          {"id": "d", "symbol": "connect", "position": "before", "action": {"delay": "200ms", "log": true}, "once": "hierarchy"},
          {"id": "s", "symbol": "write", "position": "before", "action": {"args": [{"arg": 2, "value": 1}]}, "when": {"site": "app+0x1a2b", "nth": 1}},
          {"id": "x", "symbol": "fx_scale", "prototype": "double fx_scale(double x, double k)", "position": "after", "action": {"return": 0.25}},
          {"id": "q", "symbol": "fx_swap", "prototype": "struct pair fx_swap(struct pair p)", "types": {"struct pair": ["double", "double"]},
           "position": "instead", "action": {"return": [42.5, -1]}, "autoRemove": true}
        ]
        """#)
    }

    @Test func aRuleAddedFromCodeIsLeftOutAndSaysSo() throws {
        let t = try ScratchTable()
        var rule = try RuleDecoder(source: "t").decode(#"{"id":"code","symbol":"close","position":"before","action":{"log":true}}"#)
        rule[0].source = nil
        try t.table.add(try RuleCompiler().compile(rule))
        let out = try Proc.aspectctl(["list", "--table", t.name, "--rules"])
        #expect(out.status == 0 && out.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "[]", "\(out)")
        #expect(out.stderr.contains("rule code is left out"), "\(out)")
    }

    /// What `list --json` prints is accepted by `add` (and `check`, `run`) again: each item's
    /// "rule", removed rules left out with a note, the same rules in a fresh table.
    @Test func aListJSONListingGoesBackIntoAdd() throws {
        let a = try ScratchTable(), b = try ScratchTable()
        let rules = #"""
        [{"id": "full", "family": "write", "position": "instead", "action": {"fail": "ENOSPC"}, "when": {"nth": 3, "args": [{"arg": "fd", "fdpath": "*.img"}]}},
         {"id": "flaky", "symbol": "read", "position": "instead", "action": {"fail": ["EIO", "EINTR"]}, "when": {"probability": 0.5}},
         {"id": "db", "family": "open", "position": "instead", "action": {"fail": "EACCES"}, "when": {"args": [{"arg": "path", "glob": "*.db"}]}},
         {"id": "gone", "symbol": "close", "position": "before", "action": {"log": true}}]
        """#
        #expect(try Proc.run(Paths.aspectctl, ["add", "--table", a.name, "--rules", "-"], stdin: rules).status == 0)
        #expect(try Proc.aspectctl(["remove", "--table", a.name, "gone"]).status == 0)
        let listing = try Proc.aspectctl(["list", "--table", a.name, "--all", "--json"])
        #expect(listing.status == 0 && listing.stdout.contains(#""state": "removed""#), "\(listing)")

        let added = try Proc.run(Paths.aspectctl, ["add", "--table", b.name, "--rules", "-"], stdin: listing.stdout)
        #expect(added.status == 0, "\(added)")
        #expect(added.stdout.split(separator: "\n").map { $0.split(separator: "@")[0] } == ["full", "flaky", "db"], "\(added)")
        #expect(added.stderr.contains(#"aspectctl: note: <stdin>:"#) && added.stderr.contains(#"rule "gone" is removed in this listing of a table, so it is not taken"#), "\(added)")
        #expect(a.table.rules().map(shape) == b.table.rules().map(shape), "the same rules, ids and drawn seed")

        let checked = try Proc.run(Paths.aspectctl, ["check", "--rules", "-"], stdin: listing.stdout)
        #expect(checked.status == 0 && checked.stdout.contains("3 rule(s) valid"), "\(checked)")
        let ran = try Proc.run(Paths.aspectctl, ["run", "--rules", "-", "--", "/bin/true"], stdin: listing.stdout)
        #expect(ran.status == 0 && ran.stderr.contains(#"rule "gone" is removed"#), "\(ran)")

        // An item whose table kept no JSON (a rule added from code) cannot be taken: an error
        // that says why and what to do, and nothing is added.
        let c = try ScratchTable(), d = try ScratchTable()
        var rule = try RuleDecoder(source: "t").decode(#"{"id":"code","symbol":"close","position":"before","action":{"log":true}}"#)
        rule[0].source = nil
        try c.table.add(try RuleCompiler().compile(rule))
        let bare = try Proc.aspectctl(["list", "--table", c.name, "--json"])
        let refused = try Proc.run(Paths.aspectctl, ["add", "--table", d.name, "--rules", "-"], stdin: bare.stdout)
        #expect(refused.status == 65, "\(refused)")
        #expect(refused.stderr.contains(#"rule "code": rule: this item of a `list --json` listing has no "rule""#)
                && refused.stderr.contains("add that rule from its own rules file, or drop the item"), "\(refused)")
        #expect(d.table.rules().isEmpty)
    }
}
