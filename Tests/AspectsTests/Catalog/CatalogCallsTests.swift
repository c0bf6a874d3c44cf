import Foundation
import Testing
import AspectsCore
import AspectsRules

/// Tests generated from the catalog: every function called once (Tests/Fixtures/generated/
/// catalog_calls.c, written by aspects-gen from the `test:` lines of config/catalog.spec).
@Suite struct CatalogCallsTests {
    let catalog = Catalog.builtIn

    func scratchDirectory() throws -> String {
        let dir = NSTemporaryDirectory() + "aspects-calls-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    func run(_ args: [String] = [], environment: [String: String?] = [:]) throws -> Outcome {
        let bin = try Fixture.build("generated/catalog_calls", flags: ["-lpthread"])
        let dir = try scratchDirectory()
        defer { TableSegments.removeScratch(dir) }
        return try Proc.run(bin, args, environment: environment, directory: dir)
    }

    @Test func everyFunctionBehavesTheSameWithThePreloadUnarmedAndArmed() throws {
        let plain = try run()
        #expect(plain.status == 0)
        let tested = catalog.groups.filter { catalog.primary(of: $0).testExpression != nil }
        #expect(plain.stdout.split(separator: "\n").count == tested.count)
        #expect(try run(environment: Proc.preload(table: nil)).stdout == plain.stdout)

        // Every group armed with a rule that never fires.
        let t = try ScratchTable(rules: 512)
        var rules: [String] = []
        for g in catalog.groups where !g.isNoReturn {
            let name = catalog.primary(of: g).name
            rules.append(#"{"symbol":"\#(name)","position":"before","action":{"log":true},"when":{"nth":1000000000}}"#)
        }
        try t.add("[" + rules.joined(separator: ",") + "]")
        let armed = try run(environment: Proc.preload(table: t.name))
        #expect(armed.stdout == plain.stdout)
        #expect(armed.status == plain.status)
        #expect(t.table.rules().contains { $0.matched > 0 })
    }

    @Test func failMakesEveryFunctionFailTheDocumentedWay() throws {
        for g in catalog.groups where g.failure != .none {
            let f = catalog.primary(of: g)
            guard f.testExpression != nil else { continue }
            let t = try ScratchTable()
            // Only the harness's own call: calls libc makes internally come from libc.so.
            try t.add(#"{"symbol":"\#(f.name)","position":"instead","action":{"fail":true},"when":{"caller":"catalog_calls-*"}}"#)
            let r = try run([f.name], environment: Proc.preload(table: t.name))
            let name = g.defaultErrno!
            let code: Int32 = g.failure.usesEAI ? ErrorNames.eai(name)! : g.failure.usesHErrno ? ErrorNames.hErrno(name)! : ErrorNames.errno(name)!
            let ret = g.failure.returnValue(for: code)!
            let errno = g.failure.setsErrno ? code : 0
            #expect(r.stdout == "\(f.name) ret=\(ret) errno=\(errno)\n", "\(f.name) (\(g.failure.rawValue) \(name))")
        }
    }

    @Test func realProgramsRunUnchangedWithEveryFunctionArmed() throws {
        let t = try ScratchTable(rules: 512)
        let rules = catalog.groups.map { g in
            #"{"symbol":"\#(catalog.primary(of: g).name)","position":"before","action":{"log":true},"when":{"nth":1000000000}}"#
        }
        try t.add("[" + rules.joined(separator: ",") + "]")
        // names only: sizes and times of / change while other tests run
        let script = "ls /usr/bin | sort | head -5; printf 'x\\ny\\n' | tac; echo $((6 * 7)); sh -c 'exit 3'; echo $?"
        let plain = try Proc.run("/bin/sh", ["-c", script])
        let armed = try Proc.run("/bin/sh", ["-c", script], environment: Proc.preload(table: t.name))
        #expect(armed.stdout == plain.stdout)
        #expect(armed.stderr == plain.stderr)
        #expect(armed.status == plain.status)
        #expect(t.table.rules().filter { $0.matched > 0 }.count > 10)
    }
}
