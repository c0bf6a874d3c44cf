import Foundation
import Testing
import AspectsCore
import AspectsRules

/// `check` and `add` say when a rule names one function of a family (`write`, while programs
/// often call `pwrite64` or `writev`): a note on stderr (and in `check --json`), never an
/// error, also with --strict.
@Suite struct FamilySuggestionTests {
    static let onWrite = #"{"id":"w","symbol":"write","position":"instead","action":{"fail":"ENOSPC"}}"#

    @Test(.tags(.fast)) func theCatalogKnowsEachFunctionsFamily() {
        let c = Catalog.builtIn
        #expect(c.family(of: c.function(named: "write")!) == "write")
        #expect(c.family(of: c.function(named: "pwrite64")!) == "write")
        #expect(c.family(of: c.function(named: "fdatasync")!) == "sync")
        #expect(c.family(of: c.function(named: "openat64")!) == "open")
        #expect(c.family(of: c.function(named: "copy_file_range")!) == nil)
        #expect(c.familyMembers("write") == "write, pwrite/pwrite64, writev, pwritev/pwritev64, pwritev2/pwritev64v2")
    }

    @Test func checkNotesTheFamilyOfARuleOnOneMember() throws {
        for strict in [false, true] {
            let r = try Proc.aspectctl(["check", "--rule", Self.onWrite] + (strict ? ["--strict"] : []))
            #expect(r.status == 0, "\(r)")
            #expect(r.stderr.contains(#"aspectctl: note: rule "w": write is one of the write family (write, pwrite/pwrite64, writev, pwritev/pwritev64, pwritev2/pwritev64v2)"#), "\(r)")
            #expect(r.stderr.contains(#""family": "write" in place of "symbol" covers them all"#), "\(r)")
            #expect(!r.stderr.contains("warning"), "\(r)")
        }
        let alias = try Proc.aspectctl(["check", "--inject", "pwrite64:error=EIO"])
        #expect(alias.status == 0 && alias.stderr.contains("note: rule: pwrite64 is one of the write family"), "\(alias)")
        let sync = try Proc.aspectctl(["check", "--rule", #"{"symbol":"fsync","position":"instead","action":{"fail":true}}"#])
        #expect(sync.stderr.contains("fsync is one of the sync family (fsync, fdatasync)"), "\(sync)")
    }

    @Test func noNoteForAFamilyAListOrAFunctionOfNoFamily() throws {
        for rule in [#"{"family":"write","position":"instead","action":{"fail":"ENOSPC"}}"#,
                     #"{"symbol":["write","pwrite"],"position":"instead","action":{"fail":"ENOSPC"}}"#,
                     #"{"symbol":"copy_file_range","position":"instead","action":{"fail":"ENOSPC"}}"#] {
            let r = try Proc.aspectctl(["check", "--rule", rule])
            #expect(r.status == 0 && !r.stderr.contains("note:"), "\(rule): \(r)")
        }
    }

    @Test func checkJsonListsTheNotes() throws {
        let r = try Proc.aspectctl(["check", "--json", "--rule", Self.onWrite])
        #expect(r.status == 0, "\(r)")
        let doc = try JSONParser.parse(r.stdout)
        guard case .array(let notes)? = doc["notes"]?.value, let first = notes.first else { Issue.record("no notes: \(r.stdout)"); return }
        #expect(first["rule"]?.value == .string(#"rule "w""#))
        guard case .string(let message)? = first["message"]?.value else { Issue.record("no message"); return }
        #expect(message.hasPrefix("write is one of the write family"))
        let schema = SchemaValidator(root: try JSONParser.parse(try String(contentsOfFile: Paths.root + "/config/check.schema.json", encoding: .utf8)))
        let problems = try schema.validate(doc)
        #expect(problems.isEmpty, "\(problems)")
    }

    @Test func addNotesTheFamilyAndAddsTheRule() throws {
        let t = try ScratchTable()
        let r = try Proc.aspectctl(["add", "--table", t.name, "--strict", "--rule", Self.onWrite])
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout.hasPrefix("w@"), "\(r)")
        #expect(r.stderr.contains(#"aspectctl: note: rule "w": write is one of the write family"#), "\(r)")
        #expect(t.table.rules().map(\.id) == ["w"])
    }
}
