import Foundation
import Testing
import AspectsCore
import AspectsRules

/// config/rule.schema.json describes what the decoder accepts.
@Suite(.tags(.fast)) struct SchemaTests {
    let schema: JSONNode = {
        try! JSONParser.parse(try! String(contentsOfFile: Paths.root + "/config/rule.schema.json", encoding: .utf8))
    }()

    @Test func everyExampleValidatesAgainstTheSchema() throws {
        let dir = Paths.root + "/config/examples"
        let files = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".json") }
        #expect(files.count >= 4)
        for f in files {
            let doc = try JSONParser.parse(try String(contentsOfFile: dir + "/" + f, encoding: .utf8))
            #expect(SchemaValidator(root: schema).validate(doc).isEmpty, "\(f): \(SchemaValidator(root: schema).validate(doc))")
            // and the decoder accepts what the schema accepts
            _ = try RuleCompiler().compile(try RuleDecoder(source: f).decode(try String(contentsOfFile: dir + "/" + f, encoding: .utf8)))
        }
    }

    @Test func theSchemaNamesExactlyTheDecodersFields() {
        func names(_ def: String) -> Set<String> {
            guard case .object(let m)? = schema["$defs"]?[def]?["properties"]?.value else { return [] }
            return Set(m.map(\.key))
        }
        #expect(names("rule") == Set(RuleDecoder.ruleFields))
        #expect(names("action") == Set(RuleDecoder.actionFields))
        #expect(names("when") == Set(RuleDecoder.whenFields))
        #expect(names("matcher") == Set(RuleDecoder.matcherFields))
    }

    @Test func theSchemaRejectsWhatTheDecoderRejects() throws {
        let bad = [
            #"{"symbol":"write","position":"around","action":{"fail":true}}"#,
            #"{"symbol":"write","position":"instead"}"#,
            #"{"symbol":"write","position":"instead","action":{"fail":true},"nth":3}"#,
            #"{"symbol":"write","position":"instead","action":{"fail":true},"when":{"nth":0}}"#,
            #"{"symbol":"write","position":"instead","action":{}}"#,
            #"{"symbol":"write","position":"instead","action":{"delay":"200"}}"#,
            #"{"symbol":"open","position":"instead","action":{"fail":true},"when":{"args":[{"arg":0}]}}"#,
        ]
        for text in bad {
            #expect(!SchemaValidator(root: schema).validate(try JSONParser.parse(text)).isEmpty, "schema accepted \(text)")
            #expect(throws: AspectsError.self) { try RuleCompiler().compile(try RuleDecoder(source: "t").decode(text)) }
        }
    }

    /// A struct result in order or by field name: the schema and the compiler agree on both
    /// forms, and on a field value that is no number.
    @Test func structResultsByNameOrInOrder() throws {
        func rule(_ result: String) -> String {
            #"{"symbol":"fx_swap","prototype":"struct pair fx_swap(struct pair p)","types":{"struct pair":["double a","double b"]},"position":"instead","action":{"return":\#(result)}}"#
        }
        for good in ["[1.5, 2]", #"{"b": 2, "a": 1.5}"#] {
            #expect(SchemaValidator(root: schema).validate(try JSONParser.parse(rule(good))).isEmpty, "\(good)")
            _ = try RuleCompiler().compile(try RuleDecoder(source: "t").decode(rule(good)))
        }
        for bad in [#"{"a": "x", "b": 2}"#, "{}", #"["x", 2]"#] {
            #expect(!SchemaValidator(root: schema).validate(try JSONParser.parse(rule(bad))).isEmpty, "schema accepted \(bad)")
            #expect(throws: AspectsError.self, "\(bad)") { try RuleCompiler().compile(try RuleDecoder(source: "t").decode(rule(bad))) }
        }
    }
}
