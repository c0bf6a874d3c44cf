import Foundation

/// The part of `aspectctl --experimental-dump-help` (swift-argument-parser's ToolInfoV0, whose
/// module is not a product of that package) that the man page is written from.
struct CommandInfo: Decodable {
    var commandName: String
    var abstract: String?
    var discussion: String?
    var shouldDisplay: Bool?
    var subcommands: [CommandInfo]?
    var arguments: [ArgumentInfo]?

    var shown: Bool { shouldDisplay ?? true }
}

struct ArgumentInfo: Decodable {
    struct Name: Decodable, Hashable {
        var kind: String  // long, short, longWithSingleDash
        var name: String

        /// As typed on the command line.
        var spelled: String { kind == "long" ? "--" + name : "-" + name }
    }

    var kind: String  // positional, option, flag
    var shouldDisplay: Bool?
    var isOptional: Bool
    var isRepeating: Bool
    var parsingStrategy: String
    var names: [Name]?
    var valueName: String?
    var defaultValue: String?
    var allValues: [String]?
    var abstract: String?
    var discussion: String?

    var shown: Bool { shouldDisplay ?? true }
    var isPositional: Bool { kind == "positional" }
    /// Everything after `--` (run's and explore's command).
    var takesTheRest: Bool { parsingStrategy == "allRemainingInput" || parsingStrategy == "postTerminator" }
    /// The argument parser's own --help and --version, which every command has.
    var isBuiltIn: Bool { (names ?? []).contains { $0.name == "help" || $0.name == "version" } }
}

struct ToolInfo: Decodable {
    var serializationVersion: Int
    var command: CommandInfo

    static func decode(_ data: Data) throws -> ToolInfo {
        let info = try JSONDecoder().decode(ToolInfo.self, from: data)
        guard info.serializationVersion == 0 else {
            throw ManPageError("the command tree is in serialization version \(info.serializationVersion), this generator reads version 0; update Sources/ManPages/ToolInfo.swift")
        }
        return info
    }
}

public struct ManPageError: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}
