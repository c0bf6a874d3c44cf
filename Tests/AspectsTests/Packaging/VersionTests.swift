import Foundation
import Testing

/// One version everywhere it is written: aspectctl's `--version`, the pytest plugin's
/// pyproject.toml, the newest version CHANGELOG.md names (its tag), and the version the
/// dependency line of docs/testing.md asks for.
@Suite struct VersionTests {
    static func text(_ path: String) throws -> String { try String(contentsOfFile: Paths.root + "/" + path, encoding: .utf8) }

    /// The first quoted string after `marker` on the first line that has it.
    static func quoted(after marker: String, in text: String) -> String? {
        guard let line = text.split(separator: "\n").first(where: { $0.contains(marker) }),
            let start = line.range(of: marker)?.upperBound,
            let open = line[start...].firstIndex(of: "\"")
        else { return nil }
        let rest = line[line.index(after: open)...]
        return rest.firstIndex(of: "\"").map { String(rest[..<$0]) }
    }

    @Test(.tags(.fast)) func everyPlaceNamesTheSameVersion() throws {
        let cli = try #require(Self.quoted(after: "version:", in: try Self.text("Sources/aspectctl/AspectCtl.swift")))
        let python = Self.quoted(after: "version =", in: try Self.text("python/pyproject.toml"))
        let released = try Self.text("CHANGELOG.md").split(separator: "\n").first { $0.hasPrefix("## ") && $0 != "## Unreleased" }
            .map { String($0.dropFirst(3).prefix { $0 != " " }) }
        let documented = Self.quoted(after: "/aspects\", from:", in: try Self.text("docs/testing.md"))
        #expect(python == cli, "python/pyproject.toml")
        #expect(released == cli, "CHANGELOG.md's newest version")
        #expect(documented == cli, "docs/testing.md's dependency line")
    }
}
