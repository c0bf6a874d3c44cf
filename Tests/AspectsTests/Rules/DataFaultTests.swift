import Foundation
import Testing
import AspectsRules

/// The declarative data faults: `corrupt` (after: seeded bits of the bytes a read returned
/// flipped) and `short` (before: the original moves a seeded part of its count), both a pure
/// function of the seed, the rule and the call number — predicted here by SplitMix64.
@Suite struct DataFaultTests {
    /// 200,000 random bytes (and their gzip), made once per test in a directory of its own.
    struct Data200K {
        let dir: String
        let bytes: [UInt8]
        var path: String { dir + "/data.bin" }

        init() throws {
            dir = NSTemporaryDirectory() + "data-faults-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            var generator = SystemRandomNumberGenerator()
            bytes = (0..<200_000).map { _ in UInt8.random(in: 0...255, using: &generator) }
            try Data(bytes).write(to: URL(fileURLWithPath: dir + "/data.bin"))
            #expect(try Proc.run("/usr/bin/env", ["gzip", "-k", dir + "/data.bin"]).status == 0)
        }

        func read(_ name: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: dir + "/" + name))) }
        func remove() { TableSegments.removeScratch(dir) }
    }

    static func run(_ rule: String, _ script: String) throws -> (Outcome, ScratchTable) {
        let t = try ScratchTable()
        try t.add(rule)
        return (try Proc.run("/bin/sh", ["-c", script], environment: Proc.preload(table: t.name)), t)
    }

    @Test(.tags(.realPrograms)) func gzipCatchesACorruptRead() throws {
        let d = try Data200K()
        defer { d.remove() }
        let rule = #"{"id":"flip","symbol":"read","position":"after","action":{"corrupt":{"arg":1,"bits":1}},"when":{"nth":1,"seed":7}}"#
        let (r, t) = try Self.run(rule, "exec gzip -t \(d.path).gz")
        #expect(r.status == 1 && r.stderr.contains("crc error"), "\(r)")
        let fired = try #require(t.table.rules().first)
        #expect(fired.fired == 1 && fired.actions.contains("corrupt 1 bit of arg 1 (buf) (seed 7)"), "\(fired.actions)")
        // without the rule the archive is sound
        #expect(try Proc.run("/usr/bin/env", ["gzip", "-t", d.path + ".gz"]).status == 0)
    }

    /// cat's first read comes back with exactly the bits SplitMix64 predicts flipped; sha256sum
    /// sees the difference; the same seed corrupts the same bits on every run. (cat writes to a
    /// pipe: between two regular files it copies with copy_file_range, reading nothing.)
    @Test func aCorruptReadIsReproducibleAndPredicted() throws {
        let d = try Data200K()
        defer { d.remove() }
        let rule = #"{"id":"flip","symbol":"read","position":"after","action":{"corrupt":{"arg":1,"bits":3}},"when":{"nth":1,"seed":11,"process":"*/cat"}}"#
        let (r1, t1) = try Self.run(rule, "cat \(d.path) | dd of=\(d.dir)/one status=none; cat \(d.path) | sha256sum")
        let (r2, _) = try Self.run(rule, "cat \(d.path) | dd of=\(d.dir)/two status=none")
        #expect(r1.status == 0 && r2.status == 0, "\(r1) \(r2)")
        let one = try d.read("one"), two = try d.read("two")
        #expect(one == two && one != d.bytes && one.count == d.bytes.count)
        // the bytes the first read returned, with the predicted bits flipped
        let first = try #require(t1.table.events(from: 0).events.first)
        let returned = Int(first.returnValue)
        #expect(returned > 0 && returned <= d.bytes.count && first.callNumber == 1, "\(first)")
        let expected = SplitMix64.corrupted(Array(d.bytes[0..<returned]), seed: 11, id: "flip", call: 1, bits: 3) + d.bytes[returned...]
        #expect(one == expected)
        #expect(zip(one, d.bytes).map { ($0 ^ $1).nonzeroBitCount }.reduce(0, +) == 3)
        let plain = try Proc.run("/usr/bin/env", ["sha256sum", d.path])
        #expect(!r1.stdout.isEmpty && r1.stdout.prefix(64) != plain.stdout.prefix(64), "\(r1.stdout) \(plain.stdout)")
        // another seed, other bits
        let (_, _) = try Self.run(rule.replacingOccurrences(of: #""seed":11"#, with: #""seed":12"#), "cat \(d.path) | dd of=\(d.dir)/three status=none")
        let three = try d.read("three")
        #expect(three != one)
    }

    /// fread counts items: the bytes it returned are items × size, and exactly the predicted
    /// bits of them flip.
    @Test func freadItemsAreCorruptedAsBytes() throws {
        let dir = NSTemporaryDirectory() + "data-faults-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { TableSegments.removeScratch(dir) }
        try Data(count: 1000).write(to: URL(fileURLWithPath: dir + "/zeros"))
        let rule = #"{"id":"items","symbol":"fread","position":"after","action":{"corrupt":{"arg":0,"bits":5}},"when":{"seed":21}}"#
        let t = try ScratchTable()
        try t.add(rule)
        let host = try Fixture.build("advice_host")
        let r = try Proc.run("/bin/sh", ["-c", "exec \(host) fread \(dir)/zeros > \(dir)/out"], environment: Proc.preload(table: t.name))
        #expect(r.stderr.contains("fread: 250"), "\(r)")   // 1000 bytes: 250 items of 4
        let out = [UInt8](try Data(contentsOf: URL(fileURLWithPath: dir + "/out")))
        #expect(out == SplitMix64.corrupted([UInt8](repeating: 0, count: 1000), seed: 21, id: "items", call: 1, bits: 5))
        #expect(out.map(\.nonzeroBitCount).reduce(0, +) == 5)
    }

    /// A read that returned nothing (end of file) has no bytes to corrupt: it does not match,
    /// so `nth` counts the reads that returned data.
    @Test func onlyReadsThatReturnedDataMatch() throws {
        let d = try Data200K()
        defer { d.remove() }
        let rule = #"{"id":"second","symbol":"read","position":"after","action":{"corrupt":{"arg":1}},"when":{"nth":2,"seed":1}}"#
        // gzip reads the whole archive at once, then gets 0
        let (r, t) = try Self.run(rule, "exec gzip -t \(d.path).gz")
        #expect(r.status == 0, "\(r)")
        let rule2 = try #require(t.table.rules().first)
        #expect(rule2.matched == 1 && rule2.fired == 0)
    }

    /// dd and cat get partial writes and reads and complete them: the copy is whole. (Through
    /// pipes: cat copies a regular file to another with copy_file_range.)
    @Test(arguments: [
        (#"{"id":"cut","symbol":"write","position":"before","action":{"short":true},"when":{"seed":3}}"#, "dd if=%in of=%out bs=65536 status=none"),
        (#"{"id":"cut","symbol":"read","position":"before","action":{"short":true},"when":{"seed":3}}"#, "cat %in | cat > %out"),
        (#"{"id":"cut","symbol":["write","pwrite"],"position":"before","action":{"short":true},"when":{"seed":5,"probability":0.5}}"#, "cat %in | cat > %out"),
    ])
    func correctProgramsCompleteShortTransfers(rule: String, command: String) throws {
        let d = try Data200K()
        defer { d.remove() }
        let script = command.replacingOccurrences(of: "%in", with: d.path).replacingOccurrences(of: "%out", with: d.dir + "/copy")
        let (r, t) = try Self.run(rule, script)
        #expect(r.status == 0, "\(r)")
        let copy = try d.read("copy")
        #expect(copy == d.bytes)
        // every firing made a partial transfer the program had to continue
        let cut = try #require(t.table.rules().first)
        #expect(cut.fired >= 1 && cut.matched > cut.fired || cut.fired >= 2, "\(cut.matched) \(cut.fired)")
    }

    /// The first write of dd is cut to the count SplitMix64 predicts, and the event shows it.
    @Test func aShortWriteIsPredicted() throws {
        let d = try Data200K()
        defer { d.remove() }
        let rule = #"{"id":"cut","symbol":"write","position":"before","action":{"short":true},"when":{"nth":1,"seed":99}}"#
        let (r, t) = try Self.run(rule, "exec dd if=\(d.path) of=\(d.dir)/copy bs=65536 status=none")
        let copy = try d.read("copy")
        #expect(r.status == 0 && copy == d.bytes, "\(r)")
        let first = try #require(t.table.events(from: 0).events.first)
        #expect(first.arguments.last == String(SplitMix64.shortCount(seed: 99, id: "cut", call: 1, count: 65536)), "\(first.arguments)")
        #expect(t.table.rules().first?.actions.contains("short arg 2 (count) (seed 99)") == true)
    }

    /// A seed is drawn when the rule gives none, and printed so the run can be repeated.
    @Test func aSeedIsDrawnAndSaid() throws {
        let r = try Proc.aspectctl(["run", "--rule", #"{"id":"cut","symbol":"write","position":"before","action":{"short":true}}"#, "--", "/bin/true"])
        #expect(r.status == 0 && r.stderr.contains("aspectctl: rule cut: seed "), "\(r)")
    }

    /// The preload's draws (advice_data.h) are SplitMix64's, on shared vectors.
    @Test func theSwiftPredictionIsThePreloads() throws {
        let bin = try Fixture.build("data_fault_vectors", flags: Paths.preloadIncludes)
        let lines = try Proc.run(bin).stdout.split(separator: "\n")
        #expect(lines.count > 100)
        for line in lines {
            let f = line.split(separator: " ").map(String.init)
            let n = f.dropFirst().compactMap { UInt64($0) }
            if f[0] == "S" {
                #expect(SplitMix64.shortCount(seed: n[0], ruleKey: n[1], call: n[2], count: n[3]) == n[4], "\(line)")
            } else {
                #expect(SplitMix64.corruptedBits(seed: n[0], ruleKey: n[1], call: n[2], bitCount: n[3], bits: Int(n[4])) == Array(n[5...]), "\(line)")
            }
        }
    }

    /// Where a fault makes no sense, check says so and why.
    @Test(.tags(.fast)) func theyAreRefusedWhereTheyMakeNoSense() throws {
        func error(_ json: String) -> String {
            do { _ = try RuleCompiler().compile(try RuleDecoder(source: "t").decode(json)); return "" } catch { return "\(error)" }
        }
        #expect(error(#"{"symbol":"write","position":"after","action":{"corrupt":{"arg":1}}}"#).contains("write returns no bytes that could be corrupted"))
        #expect(error(#"{"symbol":"write","position":"after","action":{"corrupt":{"arg":1}}}"#).contains("\"corrupt\" applies to read, pread, fread, recv, recvfrom"))
        #expect(error(#"{"symbol":"fsync","position":"before","action":{"short":true}}"#).contains("fsync transfers no count of bytes that could be cut short"))
        #expect(error(#"{"symbol":"read","position":"before","action":{"corrupt":{"arg":1}}}"#).contains("action.corrupt: \"corrupt\" changes the bytes the call returned, so it runs after the original"))
        #expect(error(#"{"symbol":"read","position":"after","action":{"short":true}}"#).contains("use \"position\": \"before\""))
        #expect(error(#"{"symbol":"read","position":"after","action":{"corrupt":{"arg":0}}}"#).contains("argument 0 of read (int fd) is not where the call returns its bytes: that is argument 1 (void * buf)"))
        #expect(error(#"{"symbol":"read","position":"after","action":{"corrupt":{"arg":1,"bits":65}}}"#).contains("a firing flips 1 to 64"))
        #expect(error(#"{"symbol":["read","readv"],"position":"after","action":{"corrupt":{"arg":1}}}"#).contains("for readv: readv returns no bytes"))
        #expect(error(#"{"symbol":"fx","prototype":"long fx(void *buf, long n)","position":"before","action":{"short":true}}"#).contains("transfers no count"))
        // where they do
        #expect(error(#"{"symbol":"fread","position":"after","action":{"corrupt":{"arg":0,"bits":2}},"when":{"seed":1}}"#) == "")
        #expect(error(#"{"symbol":["read","pread","recv"],"position":"before","action":{"short":true}}"#) == "")
        #expect(error(#"{"symbol":"send","position":"before","action":{"short":true,"log":true},"when":{"nth":2}}"#) == "")
    }
}
