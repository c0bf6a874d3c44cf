import Foundation
import Testing
@testable import AspectConfig

/// Every input the fuzzing campaign kept (Fuzz/corpus: what reached new code) and every input
/// that ever crashed a target (Fuzz/regressions), replayed through the same entry points as
/// Fuzz/swift/FuzzEntry.swift: each must end in a value or a clean error.
@Suite struct FuzzRegressionTests {
    static func inputs(_ target: String) -> [(String, [UInt8])] {
        var out: [(String, [UInt8])] = []
        for dir in ["Fuzz/corpus/\(target)", "Fuzz/regressions/\(target)"] {
            let path = Paths.root + "/" + dir
            for name in ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted() {
                if let data = FileManager.default.contents(atPath: path + "/" + name) { out.append((dir + "/" + name, [UInt8](data))) }
            }
        }
        return out
    }

    @Test(arguments: ["json", "rules", "prototype", "catalog"])
    func replay(target: String) {
        let inputs = Self.inputs(target)
        #expect(inputs.count >= 3, "Fuzz/corpus/\(target) holds \(inputs.count) inputs: run Fuzz/run.sh")
        for (_, bytes) in inputs {
            let text = String(decoding: bytes, as: UTF8.self)
            switch target {
            case "json": _ = try? JSONParser.parse(text)
            case "rules": if let rules = try? RuleDecoder(source: "fuzz").decode(text) { _ = try? RuleCompiler().compile(rules) }
            case "prototype": _ = try? PrototypeParser().parse(text)
            default: _ = try? CatalogParser().parse(text)
            }
        }
    }
}
