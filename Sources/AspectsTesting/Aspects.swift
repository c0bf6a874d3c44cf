#if canImport(Glibc)
import Glibc
#endif
import Foundation
import CAspectsABI
import AspectsCore
import AspectsRules
import AspectsTable

/// Fault injection from a Swift test: run a program under rules and look at what happened,
/// or keep a table for a program the test starts itself.
///
///     let r = try Aspects.run(["dd", "if=/dev/zero", "of=\(dir)/disk.img", "bs=4k", "count=8"],
///                             rules: [.instead("write", .fail("ENOSPC"), when: .nth(3), id: "disk")])
///     #expect(r.status == 1 && r.fired("disk") == 1)
public enum Aspects {
    /// What one run did.
    public struct RunResult: Sendable {
        /// The exit status, 128+N when signal N ended it.
        public var status: Int32
        /// What the program wrote to its standard output.
        public var stdout: String
        /// What the program wrote to its standard error.
        public var stderr: String
        /// Every event the table kept: firings and logged calls, oldest first.
        public var events: [TableEvent]
        /// Per rule id: calls matched and firings, across every process of the run.
        public var stats: [String: (matched: UInt64, fired: UInt64)]
        /// Processes that attached the run's table (none: nothing could be injected).
        public var attached: [Attachment]
        /// Per rule id: where its firings came from, by call site (the events the ring kept;
        /// calls that matched without firing have no site — see RuleSites).
        public var sites: [String: RuleSites] = [:]

        /// How often the rule with this id fired (0 for an id the run did not have).
        public func fired(_ id: String) -> UInt64 { stats[id]?.fired ?? 0 }
        /// How many calls matched the rule's conditions, fired or not.
        public func matched(_ id: String) -> UInt64 { stats[id]?.matched ?? 0 }
    }

    /// Runs `argv` (the first word found on PATH) under `rules` in a table of its own, as
    /// `aspectctl run` does, and returns its status, output, events and counts.
    public static func run(
        _ argv: [String], rules: [Rule], environment: [String: String] = [:],
        input: String? = nil
    ) throws -> RunResult {
        let table = try LiveTable(rules: rules)
        defer { table.destroy() }
        var env = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        for (k, v) in try table.environment(hierarchy: true) { env[k] = v }
        let (status, stdout, stderr) = try runToEnd(
            try ProgramPath.resolve(argv[0]), Array(argv.dropFirst()),
            environment: env, input: input)
        return RunResult(
            status: status, stdout: stdout, stderr: stderr,
            events: table.events(), stats: table.stats(), attached: table.table.attachments(), sites: table.sites())
    }
}

extension Aspects {
    /// Runs `executable` with `input` on its stdin and waits for it: its status (128+N for
    /// signal N) and its output (Subprocess: both pipes read at once, so a chatty program never
    /// blocks on a full pipe, and no 50 ms polling of Foundation's Process per run).
    static func runToEnd(
        _ executable: String, _ arguments: [String], environment: [String: String],
        input: String?
    ) throws -> (status: Int32, stdout: String, stderr: String) {
        let r = try Subprocess.run(executable, arguments, environment: environment, input: input.map { Data($0.utf8) })
        return (r.status, String(decoding: r.stdout, as: UTF8.self), String(decoding: r.stderr, as: UTF8.self))
    }
}

/// A table a test keeps around a program it starts itself (a server): start the program with
/// `environment`, change rules while it runs, read events and counts. `add` returns tokens
/// (Aspects' AspectToken): `try token.remove()` removes exactly that rule.
public final class LiveTable {
    /// The table itself, the writer this type wraps (for this package's own tests: outside
    /// it, the methods above and below are the interface).
    package let table: AdviceTable
    let directory: String

    /// A new private table in a temporary directory, with `rules` added. With
    /// `livePrototypes` (`aspectctl create --live-prototypes`), a prototype rule added while the
    /// program runs applies before its next call of that function, at the cost of a thread of
    /// ours in the program.
    public init(rules: [Rule] = [], livePrototypes: Bool = false) throws {
        directory = NSTemporaryDirectory() + "aspects-testing-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        table = try AdviceTable.create(try TableName(directory + "/table"), livePrototypes: livePrototypes)
        if !rules.isEmpty { _ = try add(rules) }
    }

    /// Adds rules, all or none, after validating them as a rules file would be.
    @discardableResult
    public func add(_ rules: [Rule]) throws -> [AspectToken] {
        var compiled: [CompiledRule] = []
        for r in rules { compiled += try r.compiled() }
        return try table.addReturningTokens(compiled)
    }

    /// LD_PRELOAD and ASPECTS_TABLE for a program that is to obey this table (and, with
    /// `hierarchy`, a process hierarchy of its own for `once: hierarchy` rules).
    public func environment(hierarchy: Bool = false) throws -> [String: String] {
        var env = ["LD_PRELOAD": try Preload.library(), "ASPECTS_TABLE": table.name.name, "LD_BIND_NOW": "1"]
        if hierarchy { env["ASPECTS_HIERARCHY"] = table.newHierarchy() }
        return env
    }

    /// Every event the ring holds: firings and logged calls, oldest first.
    public func events() -> [TableEvent] { table.events(from: 0).events }

    /// Per rule id: calls matched and firings, across every process that attached.
    public func stats() -> [String: (matched: UInt64, fired: UInt64)] {
        var out: [String: (matched: UInt64, fired: UInt64)] = [:]
        for r in table.rules(includeRemoved: true) where out[r.id] == nil || r.state == .active { out[r.id] = (r.matched, r.fired) }
        return out
    }

    /// Per rule id: where its firings came from, by call site, from the events the ring
    /// holds; `firedWithoutSite` counts the firings it no longer places.
    public func sites() -> [String: RuleSites] { table.sites(of: table.rules(includeRemoved: true)) }

    /// Removes the table (processes that attached it keep their mapping until they exit).
    public func destroy() {
        try? AdviceTable.destroy(table.name)
        try? FileManager.default.removeItem(atPath: directory)
    }

    deinit { destroy() }
}
