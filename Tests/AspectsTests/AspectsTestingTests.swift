import Foundation
import Testing
import AspectsTesting
@testable import AspectConfig

/// The Swift test library (AspectsTesting): typed rules encoded to the rule JSON and checked
/// by the same code, runs, live tables with tokens — and a package that depends on this one
/// by URL at a version tag builds and passes its own `swift test` with it.
@Suite(.serialized) struct AspectsTestingTests {
    @Test func typedRulesAreTheRuleLanguage() throws {
        let r = Rule.instead("write", .fail("ENOSPC"), when: .nth(3), .argFdPath(0, "*.img"), id: "disk")
        #expect(r.json == #"{"id":"disk","symbol":"write","position":"instead","action":{"fail":"ENOSPC"},"when":{"nth":3,"args":[{"arg":0,"fdpath":"*.img"}]}}"#)
        #expect(try r.compiled().count == 1)
        let family = Rule.after("read", .fail("EIO"), when: .result(min: 1), .every(2)).family("read").scope(.hierarchy)
        #expect(family.json.contains(#""family":"read""#) && family.json.contains(#""result":{"min":1}"#) && family.json.contains(#""scope":"hierarchy""#))
        _ = try family.compiled()
        let proto = Rule.instead("fx_add", .return(-7)).prototype("int fx_add(int a, int b)")
        _ = try proto.compiled()
        // what a file may not say, a Rule may not either: the same error
        #expect(throws: AspectsError.self) { try Rule.before("write", .fail("ENOSPC")).compiled() }
        #expect(throws: AspectsError.self) { try Rule.instead("wirte", .failDefault).compiled() }
    }

    @Test func aRunAndALiveTable() throws {
        let dir = NSTemporaryDirectory() + "aspects-testing-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try Aspects.run(["dd", "if=/dev/zero", "of=\(dir)/disk.img", "bs=4k", "count=8", "status=none"],
                                rules: [.instead("write", .fail("ENOSPC"), when: .nth(3), .argFdPath(0, "*.img"), id: "disk")])
        #expect(r.status == 1 && r.stderr.contains("No space left on device"), "\(r.stderr)")
        #expect(r.fired("disk") == 1 && r.matched("disk") == 3 && r.attached.count == 1)
        // the firing's call site: dd's own call of write
        let sites = try #require(r.sites["disk"])
        #expect(sites.sites.map(\.site.object) == ["dd"] && sites.sites.map(\.fired) == [1] && sites.firedWithoutSite == 0, "\(sites)")

        let table = try LiveTable()
        defer { table.destroy() }
        let tokens = try table.add([.instead("open", .fail("EACCES"), when: .argGlob(0, "/etc/hostname"), id: "deny")])
        let env = try table.environment()
        let denied = try Proc.run("/bin/cat", ["/etc/hostname"], environment: env.mapValues { Optional($0) })
        #expect(denied.status == 1 && denied.stderr.contains("Permission denied"), "\(denied)")
        try tokens[0].remove()
        let allowed = try Proc.run("/bin/cat", ["/etc/hostname"], environment: env.mapValues { Optional($0) })
        #expect(allowed.status == 0)
        #expect(table.stats()["deny"]?.fired == 1)
    }

    /// A consumer package, depending on this repository by URL at a version tag (a local clone
    /// with a tag), writes a test with AspectsTesting and nothing else: `swift test` passes.
    /// SwiftPM builds no target with unsafe flags there (CPreload has them): the library
    /// compiles the preload itself with cc.
    @Test func aPackageDependingOnThisOneByURLRunsItsOwnTests() throws {
        let dir = NSTemporaryDirectory() + "aspects-consumer-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // the repository as it is committed, with a version tag
        #expect(try Proc.run("/usr/bin/git", ["clone", "-q", Paths.root, dir + "/aspects"]).status == 0)
        #expect(try Proc.run("/usr/bin/git", ["-C", dir + "/aspects", "tag", "0.1.0"]).status == 0)
        let consumer = dir + "/consumer"
        try FileManager.default.createDirectory(atPath: consumer + "/Tests/ConsumerTests", withIntermediateDirectories: true)
        try """
        // swift-tools-version:6.0
        import PackageDescription
        let package = Package(
            name: "consumer",
            dependencies: [.package(url: "file://\(dir)/aspects", from: "0.1.0")],
            targets: [.testTarget(name: "ConsumerTests", dependencies: [.product(name: "AspectsTesting", package: "aspects")])]
        )
        """.write(toFile: consumer + "/Package.swift", atomically: true, encoding: .utf8)
        try """
        import Foundation
        import Testing
        import AspectsTesting

        @Test func theThirdWriteFails() throws {
            let dir = NSTemporaryDirectory() + "consumer-\\(getpid())"
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            let r = try Aspects.run(["dd", "if=/dev/zero", "of=\\(dir)/disk.img", "bs=4k", "count=8", "status=none"],
                                    rules: [.instead("write", .fail("ENOSPC"), when: .nth(3), id: "disk")])
            #expect(r.status == 1 && r.fired("disk") == 1, "\\(r.stderr)")
        }
        """.write(toFile: consumer + "/Tests/ConsumerTests/ConsumerTests.swift", atomically: true, encoding: .utf8)
        let cache = dir + "/cache"
        let r = try Proc.run("/usr/bin/env", ["swift", "test", "--package-path", consumer, "--scratch-path", consumer + "/.build"],
                             environment: ["XDG_CACHE_HOME": cache, "ASPECTS_PRELOAD": nil])
        #expect(r.status == 0, "\(r.stdout.suffix(3000))\n\(r.stderr.suffix(3000))")
        #expect(r.stdout.contains("theThirdWriteFails") || r.stderr.contains("theThirdWriteFails"), "\(r.stdout.suffix(2000))")
        let built = (try? FileManager.default.contentsOfDirectory(atPath: cache + "/aspects")) ?? []
        #expect(built.contains { $0.hasPrefix("libaspects-") && $0.hasSuffix(".so") }, "the preload was built from the package's sources: \(built)")
    }
}
