import CAspectsABI
import Foundation
import AspectsCore

/// Decodes rule JSON into `Rule`s. Accepts one rule object, `{"rules": [...]}` or a bare array.
/// Every error names the source position, the rule, the field and the fix.
package struct RuleDecoder: Sendable {
    /// Shown in error locations: a file name, or "--rule" for JSON given on the command line.
    package var source: String
    /// Where a `call` action's relative object path starts: the rules file's directory (nil:
    /// the current directory, as for `--rule` and `--inject`).
    package var baseDirectory: String?

    package init(source: String, baseDirectory: String? = nil) {
        self.source = source
        self.baseDirectory = baseDirectory
    }

    package static let ruleFields = ["id", "symbol", "family", "prototype", "variadic", "types", "position", "action", "when", "scope", "autoRemove", "once", "allowAnyErrno", "failure", "comment"]
    package static let failureFields = ["return", "errno"]
    package static let actionFields = ["fail", "return", "errno", "delay", "signal", "log", "args", "call", "corrupt", "short", "context"]
    package static let corruptFields = ["arg", "bits"]
    package static let whenFields = ["nth", "after", "every", "first", "times", "probability", "seed", "args", "process", "caller", "site", "context", "result", "errno"]
    package static let resultFields = ["min", "max", "eq", "lt_arg"]
    package static let matcherFields = ["arg", "eq", "ne", "min", "max", "mask", "all", "glob", "prefix", "fdpath"]
    package static let argSetFields = ["arg", "value"]

    package func decode(_ text: String) throws(AspectsError) -> [Rule] {
        let (rules, _, errors) = try decodeEach(text)
        if let first = errors.first { throw first }
        return rules
    }

    /// Every rule of the text that decodes, and the error of each one that does not (`check`
    /// reports them all). A text that is not JSON, or not a rules file at all, still throws.
    /// `positions`: each decoded rule's place in the file (from 1), for messages.
    package func decodeEach(_ text: String) throws(AspectsError) -> (rules: [Rule], positions: [Int], errors: [AspectsError]) {
        let d = try decodeDocument(text)
        return (d.rules, d.positions, d.errors)
    }

    /// What a rules document held: the rules, their places, the errors, and what was left out
    /// on purpose (a `list --json` listing's removed rules), for the caller to say.
    package struct Document: Sendable {
        package var rules: [Rule] = []
        package var positions: [Int] = []
        package var errors: [AspectsError] = []
        package var notes: [String] = []
    }

    /// Like `decodeEach`, and also takes what `aspectctl list --json` prints: each item's rule
    /// is under "rule" (the JSON it was added with), beside its state and counts. Removed rules
    /// are left out, with a note; an item without its rule JSON is an error.
    package func decodeDocument(_ text: String) throws(AspectsError) -> Document {
        let root: JSONNode
        do {
            root = try JSONParser.parse(text)
        } catch {
            throw AspectsError(.malformedJSON, location: "\(source):\(error.line):\(error.column)", error.message,
                               fix: "fix the JSON syntax at that position")
        }
        let items: [JSONNode]
        switch root.value {
        case .array(let a):
            items = a
        case .object(let members) where members.contains(where: { $0.key == "rules" }):
            guard members.count == 1 || members.allSatisfy({ $0.key == "rules" || $0.key == "comment" }) else {
                let other = members.first { $0.key != "rules" && $0.key != "comment" }!
                throw AspectsError(.unknownField, field: other.key, location: loc(other.value),
                                   "a rules file has only \"rules\" at the top level",
                                   fix: "move \"\(other.key)\" into a rule")
            }
            guard case .array(let a) = root["rules"]!.value else {
                throw AspectsError(.wrongType, field: "rules", location: loc(root["rules"]!), "\"rules\" must be an array of rule objects, not \(root["rules"]!.typeName)")
            }
            items = a
        case .object:
            items = [root]
        default:
            throw AspectsError(.wrongType, location: loc(root), "expected a rule object, {\"rules\": [...]} or an array of rules, not \(root.typeName)")
        }
        var d = Document()
        for (n, item) in items.enumerated() {
            do {
                guard let rule = try listedRule(item, notes: &d.notes) else { continue }
                d.rules.append(try decodeRule(rule, label: items.count == 1 ? "rule" : "rule \(n + 1)"))
                d.positions.append(n + 1)
            } catch {
                d.errors.append(error)
            }
        }
        return d
    }

    /// The rule of an item: the item itself, or for an item of `list --json` (it has the
    /// "state" and "slot" no rule has) its "rule"; nil for a removed rule, which is noted.
    func listedRule(_ item: JSONNode, notes: inout [String]) throws(AspectsError) -> JSONNode? {
        guard item["state"] != nil, item["slot"] != nil else { return item }
        var id = "?"
        if case .string(let s)? = item["id"]?.value { id = s }
        if case .string(let state)? = item["state"]?.value, state != "active" {
            notes.append("\(loc(item)): rule \"\(id)\" is \(state) in this listing of a table, so it is not taken")
            return nil
        }
        guard let rule = item["rule"], case .object = rule.value else {
            throw AspectsError(.missingField, rule: "rule \"\(id)\"", field: "rule", location: loc(item),
                               "this item of a `list --json` listing has no \"rule\": the table kept no JSON for rule \"\(id)\" (added through the Swift API, or longer than \(ASPECTS_RULE_SOURCE_SIZE - 16) bytes)",
                               fix: "add that rule from its own rules file, or drop the item")
        }
        return rule
    }

    func loc(_ node: JSONNode) -> String { "\(source):\(node.line):\(node.column)" }
}
