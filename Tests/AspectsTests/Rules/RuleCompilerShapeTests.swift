import Foundation
import Testing
import AspectsCore
import AspectsRules

/// The rule compiler and the rule decoder stay a walk a newcomer can take: `compileOne` and
/// `decodeRule` are lists of steps, each a function named for what it decides and short enough
/// to read without the rest; and a rule with several problems is told the one the earliest
/// step finds.
@Suite(.tags(.fast)) struct RuleCompilerShapeTests {
    /// Longest a function of the compiler may be, in lines (its declaration to its closing brace).
    static let longestFunction = 60

    /// Every function of the files of Sources/AspectsRules/Rules whose names start with one of
    /// `prefixes` (RuleCompiler*.swift by default) with its length, found by its declaration and
    /// the closing brace at the declaration's indentation (or on the declaration's own line).
    static func functionLengths(of prefixes: [String] = ["RuleCompiler"]) throws -> [(name: String, lines: Int)] {
        let dir = Paths.root + "/Sources/AspectsRules/Rules"
        var out: [(name: String, lines: Int)] = []
        for file in try FileManager.default.contentsOfDirectory(atPath: dir).sorted()
        where prefixes.contains(where: { file.hasPrefix($0) }) && file.hasSuffix(".swift") {
            let lines = try String(contentsOfFile: dir + "/" + file, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
            for (i, line) in lines.enumerated() {
                guard let m = line.firstMatch(of: #/^( *)(?:[a-z]+ )*func ([A-Za-z_]\w*)/#) else { continue }
                let opens = line.filter { $0 == "{" }.count
                if opens > 0 && opens == line.filter({ $0 == "}" }).count {
                    out.append(("\(file): \(m.2)", 1))
                    continue
                }
                let close = String(m.1) + "}"
                let end = lines[(i + 1)...].firstIndex { $0 == close } ?? lines.count
                out.append(("\(file): \(m.2)", end - i + 1))
            }
        }
        return out
    }

    @Test func everyFunctionOfTheCompilerIsShort() throws {
        let lengths = try Self.functionLengths()
        #expect(lengths.contains { $0.name.hasSuffix(": compileOne") }, "\(lengths.map(\.name))")
        for f in lengths {
            #expect(f.lines <= Self.longestFunction, "\(f.name) is \(f.lines) lines; split it into steps named for what they decide")
        }
    }

    /// The rule decoder and the `--inject` term parser are walked the same way: `decodeRule`,
    /// `decodeAction` and `apply` are lists of steps, each named for what it decodes.
    @Test func everyFunctionOfTheDecoderIsShort() throws {
        let lengths = try Self.functionLengths(of: ["RuleDecoder", "InjectTermParser"])
        for name in ["decodeRule", "decodeAction", "decodeConditions", "apply"] {
            #expect(lengths.contains { $0.name.hasSuffix(": \(name)") }, "no \(name) in \(lengths.map(\.name))")
        }
        for f in lengths {
            #expect(f.lines <= Self.longestFunction, "\(f.name) is \(f.lines) lines; split it into steps named for what they decode")
        }
    }

    /// Of several problems, the one the earlier step finds is named (the order the errors had
    /// when compileOne was one function).
    @Test(arguments: [
        // the function before its position, the position before the action
        (#"{"symbol":"no_such_fn","position":"before","action":{"fail":"EIO"}}"#, "symbol"),
        (#"{"symbol":"write","position":"before","action":{"fail":"EIO"},"when":{"args":[{"arg":9,"eq":1}]}}"#, "position"),
        // the failure before the signal, the signal before the arguments set
        (#"{"symbol":"write","position":"instead","action":{"fail":"EBOGUS","signal":"SIGNOPE"}}"#, "action.fail"),
        (#"{"symbol":"write","position":"before","action":{"signal":"SIGNOPE","args":[{"arg":9,"value":1}]}}"#, "action.signal"),
        // the draw, the origin, the counting, the matchers, in that order
        (#"{"symbol":"write","position":"before","action":{"log":true},"when":{"seed":1,"process":"","first":2}}"#, "when.seed"),
        (#"{"symbol":"write","position":"before","action":{"log":true},"when":{"process":"","first":2}}"#, "when.process"),
        (#"{"symbol":"write","position":"before","action":{"log":true},"when":{"first":2,"args":[{"arg":9,"eq":1}]}}"#, "when.first"),
        // the matchers before the result condition
        (#"{"symbol":"write","position":"before","action":{"log":true},"when":{"errno":"EIO","args":[{"arg":0,"glob":"x"}]}}"#, "when.args[0].glob"),
    ])
    func theFirstProblemIsTheOneNamed(json: String, field: String) throws {
        let rules = try RuleDecoder(source: "t.json").decode(json)
        let error = #expect(throws: AspectsError.self) { _ = try RuleCompiler().compile(rules) }
        #expect(error?.field == field, "\(String(describing: error))")
    }
}
