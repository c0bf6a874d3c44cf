import Foundation
import Testing
import AspectsCore
import AspectsExplore

/// `explore --junit`: the campaign as JUnit XML, read back by a real XML parser (python3's
/// xml.etree), so what a CI system reads is what the campaign found.
@Suite(.serialized) struct ExploreJUnitTests {
    static let python = ["/usr/bin/python3", "/usr/local/bin/python3"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// Parses a JUnit file with xml.etree and prints what the tests check, as JSON: the
    /// suites' counts, and per test case its class name, name and failure or skip.
    static let reader = """
        import json, sys, xml.etree.ElementTree as ET
        root = ET.parse(sys.argv[1]).getroot()
        suite = root.find("testsuite")
        def case(c):
            f, s, e = c.find("failure"), c.find("skipped"), c.find("system-err")
            return {"classname": c.get("classname"), "name": c.get("name"), "time": c.get("time"),
                    "failure": None if f is None else {"message": f.get("message"), "type": f.get("type"), "text": f.text},
                    "skipped": None if s is None else s.get("message"), "stderr": None if e is None else e.text}
        print(json.dumps({"root": root.tag, "counts": {k: root.get(k) for k in ("tests", "failures", "errors", "skipped")},
                          "suite": suite.get("name"), "suiteCounts": {k: suite.get(k) for k in ("tests", "failures", "errors", "skipped")},
                          "cases": [case(c) for c in suite.findall("testcase")]}))
        """

    struct Parsed {
        var explore: Outcome
        var xml: [String: Any]
        var runs: [JSONNode]
        var cases: [[String: Any]] { xml["cases"] as? [[String: Any]] ?? [] }
    }

    func explore(_ options: [String], _ command: [String]) throws -> Parsed {
        let out = NSTemporaryDirectory() + "aspects-junit-\(UUID().uuidString)"
        defer { for p in [out, out + ".json", out + ".xml", out + ".py"] { TableSegments.removeScratch(p) } }
        let r = try Proc.aspectctl(["explore", "--out", out, "--json", out + ".json", "--junit", out + ".xml"] + options + ["--"] + command)
        let root = try JSONParser.parse(try String(contentsOfFile: out + ".json", encoding: .utf8))
        try Self.reader.write(toFile: out + ".py", atomically: false, encoding: .utf8)
        let parsed = try Proc.run(try #require(Self.python), [out + ".py", out + ".xml"])
        #expect(parsed.status == 0, "the JUnit file does not parse as XML: \(parsed.stderr)\n\(r)")
        let xml = try JSONSerialization.jsonObject(with: Data(parsed.stdout.utf8)) as? [String: Any] ?? [:]
        return Parsed(explore: r, xml: xml, runs: ReportJSON.array(root, "runs"))
    }

    /// One test case per fault point, the crashes failures with their bug's signature, the
    /// reproducer command and the stack's top frame; the counts match the JSON's runs.
    @Test(.tags(.realPrograms), .requires(python != nil, "needs python3 (xml.etree)"))
    func aCampaignIsOneTestCasePerFaultPointAndAFailurePerFinding() throws {
        let bin = try Fixture.build("explore_bugs", flags: ["-g", "-O0"])
        let p = try explore(["--function", "malloc", "--strategy", "both", "--max-runs", "6"], [bin, "same"])
        #expect(p.explore.status == 1, "\(p.explore)")
        #expect(p.xml["root"] as? String == "testsuites")
        let findings = p.runs.filter { ["crash", "hang", "check-failed"].contains(ReportJSON.str($0, "outcome") ?? "") }
        let notReached = p.runs.filter { ReportJSON.str($0, "outcome") == "not-reached" }
        let counts = ["tests": "\(p.runs.count)", "failures": "\(findings.count)", "errors": "0", "skipped": "\(notReached.count)"]
        #expect(p.xml["counts"] as? [String: String] == counts, "\(p.xml)")
        #expect(p.xml["suiteCounts"] as? [String: String] == counts, "\(p.xml)")
        #expect(p.cases.count == p.runs.count)
        #expect(findings.count >= 2, "\(p.explore.stdout)")
        let program = URL(fileURLWithPath: bin).lastPathComponent
        #expect(p.xml["suite"] as? String == "explore.\(program)")
        #expect(p.cases.allSatisfy { $0["classname"] as? String == "explore.\(program).malloc" }, "\(p.cases)")
        #expect(Set(p.cases.compactMap { $0["name"] as? String }).count == p.cases.count, "test case names are unique")

        let failed = p.cases.filter { $0["failure"] is [String: Any] }
        #expect(failed.count == findings.count)
        // named by the point's stable name: image, function, site, call, kind, errno
        let sited = try #require(failed.first { ($0["name"] as? String)?.contains("@") == true }, "\(failed)")
        let name = try #require(sited["name"] as? String)
        #expect(name.hasPrefix("\(program):malloc@\(program)+0x") && name.hasSuffix("#1/error/ENOMEM"), "\(name)")
        #expect(Set(p.runs.compactMap { ReportJSON.str($0, "name") }) == Set(p.cases.compactMap { $0["name"] as? String }), "the JSON's names")
        let failure = try #require(sited["failure"] as? [String: Any])
        #expect((failure["message"] as? String)?.hasPrefix("CRASH SIGSEGV in fill_record (explore_bugs.c:24)") == true, "\(failure)")
        #expect(failure["type"] as? String == "crash")
        let text = try #require(failure["text"] as? String)
        #expect(text.contains("bug: SIGSEGV in fill_record (explore_bugs.c:24)"), "\(text)")
        #expect(text.contains("at explore_bugs.c:24 (fill_record)"), "\(text)")
        #expect(text.contains("reproduce: aspectctl run --rules ") && text.contains("repro-0000"), "\(text)")
        #expect(text.contains("reproducer script: ") && text.contains(".sh"), "\(text)")
        #expect(text.contains("reproduced by a second run"), "\(text)")
        for c in p.cases where c["failure"] == nil || c["failure"] is NSNull {
            let skipped = c["skipped"] as? String
            #expect(skipped == nil || skipped == "the fault never fired", "\(c)")
        }
    }

    /// A program's stderr with markup, quotes, a terminal's escape sequence, a bell and a
    /// carriage return comes through a real parser: markup as text, the characters XML 1.0
    /// cannot hold written visibly.
    @Test(.tags(.realPrograms), .requires(python != nil, "needs python3 (xml.etree)"))
    func stderrWithMarkupAndControlCharactersStaysWellFormed() throws {
        let script = #"printf '\033[31m<b>&amp; "q" '"'"'s'"'"' \007 ]]> \r\n' >&2; : > made"#
        let p = try explore(["--function", "open", "--check", "test -e made"], ["/bin/sh", "-c", script])
        #expect(p.explore.status == 1, "\(p.explore)")
        let failed = p.cases.compactMap { $0["failure"] as? [String: Any] }
        #expect(!failed.isEmpty, "\(p.explore)")
        #expect(failed.allSatisfy { $0["type"] as? String == "check-failed" }, "\(failed)")
        let stderr = p.cases.compactMap { $0["stderr"] as? String }
        #expect(stderr.contains { $0.contains("\\x1b[31m<b>&amp; \"q\" 's' \\x07 ]]> \r\n") }, "\(stderr)")
    }

    /// The escaping on its own: every C0 control, U+FFFE and U+FFFF, in an attribute and in
    /// text, read back as what was meant.
    @Test(.tags(.fast)) func everyCharacterXMLCannotHoldIsWrittenVisibly() {
        let all = String(String.UnicodeScalarView((0..<0x20).compactMap(Unicode.Scalar.init))) + "\u{FFFE}\u{FFFF}<&>\"'"
        let attr = ExploreReport.xml(all)
        #expect(attr.hasPrefix("\\x00\\x01"))
        #expect(attr.contains("&#9;&#10;\\x0b\\x0c&#13;\\x0e"))
        #expect(attr.hasSuffix("\\ufffe\\uffff&lt;&amp;&gt;&quot;&apos;"))
        let text = ExploreReport.xml(all, attribute: false)
        #expect(text.contains("\\x08\t\n\\x0b\\x0c&#13;"))
    }
}
