import Foundation
import Testing
import AspectsCore

/// `aspectctl explore` run as a user runs it, for the explore suites: its outcome, and its
/// `--json` report checked against config/explore.schema.json (nil when it wrote none).
enum ExploreCLI {
    static func run(_ options: [String], _ command: [String], out: String, json: String, directory: String,
                    environment: [String: String?] = [:]) throws -> (Outcome, JSONNode?) {
        TableSegments.removeScratch(json)
        let r = try Proc.run(Paths.aspectctl, ["explore", "--out", out, "--json", json] + options + ["--"] + command,
                             environment: environment, directory: directory)
        guard let text = try? String(contentsOfFile: json, encoding: .utf8) else { return (r, nil) }
        let report = try JSONParser.parse(text)
        let schema = try JSONParser.parse(try String(contentsOfFile: Paths.root + "/config/explore.schema.json", encoding: .utf8))
        #expect(SchemaValidator(root: schema).validate(report).isEmpty, "\(SchemaValidator(root: schema).validate(report))")
        return (r, report)
    }
}

/// A report's members by name: nil (or empty) when missing or of another kind.
enum ReportJSON {
    static func str(_ n: JSONNode?, _ k: String) -> String? { if case .string(let s)? = n?[k]?.value { return s }; return nil }
    static func int(_ n: JSONNode?, _ k: String) -> Int? { if case .number(let t)? = n?[k]?.value { return Int(t) }; return nil }
    static func array(_ n: JSONNode?, _ k: String) -> [JSONNode] { if case .array(let a)? = n?[k]?.value { return a }; return [] }
}
