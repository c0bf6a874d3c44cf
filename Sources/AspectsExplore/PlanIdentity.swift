import AspectsRules

/// A plan's identity: a hash of everything that defines it — the command, setup, check,
/// functions and families, fault kinds, errnos, strategy, process globs, max-runs, seed — and
/// the names of its fault points. Two campaigns with the same id run the same faults the same
/// way, so their runs can be put together; anything else gives another id. A check of
/// sameness, not a signature: 128 bits from two FNV-1a lanes, each finished by SplitMix64.
extension ExplorePlan {
    /// `definition`: the options, as (field, value) pairs in a fixed order.
    package static func identity(definition: [(String, String)], points: [FaultPoint]) -> String {
        // Each field as "name=length:value", so that no two definitions give the same text.
        var text = ""
        for (k, v) in definition + points.map({ ("point", $0.name) }) { text += "\(k)=\(v.utf8.count):\(v)\n" }
        var a: UInt64 = 0xcbf2_9ce4_8422_2325, b: UInt64 = 0x84222325cbf29ce4
        for byte in text.utf8 {
            a = (a ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
            b = (b ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 ^ (b >> 29)
        }
        return [SplitMix64.mix(a), SplitMix64.mix(b ^ a)].map { h in
            let hex = String(h, radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }.joined()
    }

    /// Sets `id` for a campaign of `options`.
    package mutating func identify(_ options: ExploreOptions) {
        id = Self.identity(definition: options.planDefinition, points: points)
    }
}

extension ExploreOptions {
    /// What of the options defines a plan, by option name (the rest — jobs, timeout, output —
    /// only how it runs): what the plan id hashes, and what a journal keeps to say which of
    /// them changed when a resumed campaign's plan is not its own. The command as a shell
    /// would read it (quoted words: no two commands give one text).
    package var planDefinition: [(String, String)] {
        let given: [(String, String)] = [
            ("command", command.map(ExploreReport.shellQuoted).joined(separator: " ")), ("--setup", setup ?? ""), ("--check", check ?? ""),
            ("--function", functions.joined(separator: ",")), ("--family", families.joined(separator: ",")),
            ("--imported", String(imported)), ("--fault", faults.map(\.rawValue).joined(separator: ",")),
            ("--errno", errnos.joined(separator: ",")), ("--strategy", strategy.rawValue), ("--context-depth", String(contextDepth)),
            ("--process", processes.joined(separator: ",")), ("--max-runs", String(maxRuns)), ("--seed", String(seed)),
        ]
        // (a ctest test's own directory, only when it has one: other plans keep their ids)
        guard let directory else { return given }
        return given + [("directory", directory)]
    }

    /// What a journal keeps: the plan's definition, and what judges or splits its runs (runs
    /// timed out otherwise, or of another shard, do not belong in one report).
    package func journalSettings(shard: String?) -> [String: String] {
        var settings = Dictionary(planDefinition, uniquingKeysWith: { a, _ in a })
        settings["--timeout"] = timeout.map { String($0) } ?? ""
        settings["--shard"] = shard ?? ""
        // the runs journaled were classified with it: resumed without it, they would mix
        if failFastIsBug { settings["--fail-fast-is-bug"] = "given" }
        return settings
    }
}
