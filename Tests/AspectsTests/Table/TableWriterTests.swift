import CAspectsABI
import Foundation
import Testing
import AspectsRules
import AspectsTable

/// The table writer and reader on the Swift side (issue 10, items 1, 4, 5 and 6): a batch is
/// seen whole or not at all by `list` while writers commit; nothing read from the table after
/// it was validated can move aspectctl's reads out of the mapping or trap an overflow check;
/// tables are made only where processes will obey them, and our own are removable.
@Suite struct TableWriterTests {
    /// 24 log-only rules with ids "<tag>-0" ... "<tag>-23" on three functions.
    static func batch(_ tag: String) throws -> [CompiledRule] {
        let rules = (0..<24).map { i -> String in
            let symbol = ["getppid", "write", "open"][i % 3]
            return #"{"id":"\#(tag)-\#(i)","symbol":"\#(symbol)","position":"before","action":{"log":true},"when":{"nth":1000000000}}"#
        }
        return try RuleCompiler().compile(try RuleDecoder(source: "test").decode("[" + rules.joined(separator: ",") + "]"))
    }

    /// Byte offset of a header field.
    static func offset<T>(_ key: KeyPath<aspects_table_header, T>) -> Int { MemoryLayout<aspects_table_header>.offset(of: key)! }

    /// `list` reads without a lock while a writer commits batch after batch: every snapshot
    /// holds each batch whole or not at all. (It once decided each slot against the committed
    /// batch read after that slot's copy: a commit during the scan showed part of the batch.)
    @Test(.tags(.fast)) func listNeverShowsPartOfABatchWhileAWriterCommits() throws {
        let t = try ScratchTable(rules: 256)
        // The writer: its own descriptor (flock excludes per open file), on another thread.
        nonisolated(unsafe) let writer = try AdviceTable.open(try TableName(t.name))
        let batches = try (0..<4).map { try Self.batch("b\($0)") }
        let stop = ManagedAtomicFlag()
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var commits = 0
        nonisolated(unsafe) var writeError: Error?
        DispatchQueue.global().async {
            defer { done.signal() }
            var round = 0
            do {
                while !stop.isSet {
                    // Two batches in the table at a time: one added, an older one removed.
                    try writer.add(batches[round % 4])
                    if round >= 1 { try writer.remove(ids: (0..<24).map { "b\((round - 1) % 4)-\($0)" }) }
                    commits += round >= 1 ? 2 : 1
                    round += 1
                }
            } catch { writeError = error }
        }
        var snapshots = 0, partial: [String] = []
        // 3 s and 20 commits at least (a loaded machine commits slower), 30 s at most.
        let started = Date()
        while partial.isEmpty && Date().timeIntervalSince(started) < 30 && (Date().timeIntervalSince(started) < 3 || commits < 20) {
            let ids = t.table.rules().map(\.id)
            for tag in (0..<4).map({ "b\($0)-" }) {
                let n = ids.filter { $0.hasPrefix(tag) }.count
                if n != 0 && n != 24 { partial.append("\(tag) \(n) of 24") }
            }
            snapshots += 1
        }
        stop.set()
        done.wait()
        #expect(writeError == nil, "\(String(describing: writeError))")
        #expect(commits > 20, "the writer committed only \(commits) batches")
        #expect(partial.isEmpty, "partial batches in \(snapshots) snapshots during \(commits) commits: \(partial)")
        print("list snapshots: \(snapshots) during \(commits) commits, partial: \(partial.count)")
    }

    /// A program under `run` scribbles over the table's geometry (capacities and offsets)
    /// while aspectctl holds it open; the report afterwards reads through the geometry it
    /// validated at open and shows the rules. (It once read the offsets from the header at
    /// every access, and died of SIGSEGV.)
    @Test(.tags(.realPrograms)) func aRewrittenHeaderDoesNotMoveAspectctlsReads() throws {
        let t = try ScratchTable()
        var script = ""
        let huge: UInt64 = 1 << 40
        let pokes: [(Int, UInt64, Int)] = [
            (Self.offset(\.rule_capacity), UInt64(UInt32.max), 4), (Self.offset(\.rules_offset), huge, 8),
            (Self.offset(\.event_capacity), 1 << 30, 4), (Self.offset(\.events_offset), huge, 8),
            (Self.offset(\.stat_capacity), 1 << 30, 4), (Self.offset(\.stats_offset), huge, 8),
            (Self.offset(\.group_capacity), UInt64(UInt32.max), 4), (Self.offset(\.lists_offset), huge, 8),
            (Self.offset(\.protos_offset), huge, 8), (Self.offset(\.armed_offset), huge, 8),
        ]
        // the command writes them into the table's segment (aspects_abi.h), as any attached
        // process could
        let shmid = try #require(TableSegments.anchor(t.name)).shmid
        script = "import ctypes, os\nlibc = ctypes.CDLL(None)\nlibc.shmat.restype = ctypes.c_void_p\n"
            + "base = libc.shmat(\(shmid), None, 0)\n"
        for (offset, value, width) in pokes {
            script += "ctypes.memmove(base + \(offset), (\(value)).to_bytes(\(width), 'little'), \(width))\n"
        }
        script += "os.write(1, b'')\n"
        let rule = #"{"id":"wr","symbol":"write","position":"before","action":{"log":true}}"#
        let r = try Proc.aspectctl(["run", "--table", t.name, "--report", "--rule", rule, "--", "/usr/bin/python3", "-c", script])
        #expect(r.status == 0, "\(r)")
        #expect(r.stderr.contains("report for /usr/bin/python3") && r.stderr.contains("\nwr  "), "\(r)")
        // Opened afresh, the table is refused for its layout: exit 65, not a crash.
        let list = try Proc.aspectctl(["list", "--table", t.name])
        #expect(list.status == 65 && list.stderr.contains("inconsistent layout"), "\(list)")
    }

    /// The hierarchy counter, which every attaching process increments, at the end of 64 bits:
    /// `run` starts the command. (It once trapped: exit 132.)
    @Test func runDoesNotTrapOnAHierarchyCounterAtItsEnd() throws {
        let t = try ScratchTable()
        UnsafeMutableRawPointer(t.table.header).storeBytes(of: UInt64.max, toByteOffset: Self.offset(\.next_hierarchy), as: UInt64.self)
        let r = try Proc.aspectctl(["run", "--table", t.name, "--rule", #"{"symbol":"getppid","position":"before","action":{"log":true}}"#,
                                    "--", "/bin/true"])
        #expect(r.status == 0, "\(r)")
    }

    /// A prototype entry's rule count (a word any process can write) at the end of 32 bits:
    /// adding another rule for the function does not trap, and the entry lives exactly as long
    /// as its rules, counted from the slots. (It once trapped: exit 132.)
    @Test func aDamagedPrototypeRuleCountNeitherTrapsNorFreesALiveEntry() throws {
        let t = try ScratchTable()
        let rule = { (id: String) in
            #"{"id":"\#(id)","symbol":"aspects_probe_fn","prototype":"int aspects_probe_fn(int x)","position":"before","action":{"log":true}}"#
        }
        try t.add(rule("p1"))
        let k = try #require((0..<Int(ASPECTS_PROTO_CAPACITY)).first { t.table.proto($0).pointee.state == 1 })
        t.table.proto(k).pointee.rules = UInt32.max
        let add = try Proc.aspectctl(["add", "--table", t.name, "--rule", rule("p2")])
        #expect(add.status == 0, "\(add)")
        #expect(t.table.proto(k).pointee.rules == 2)
        #expect(try Proc.aspectctl(["remove", "--table", t.name, "p1"]).status == 0)
        #expect(t.table.proto(k).pointee.state == 1 && t.table.proto(k).pointee.rules == 1, "freed while p2 names it")
        t.table.proto(k).pointee.rules = 0
        #expect(try Proc.aspectctl(["remove", "--table", t.name, "p2"]).status == 0)
        #expect(!t.table.anyPrototypeActive, "outlived its rules")
    }

    /// No table is made where no process would obey it: behind a symbolic link in the path.
    @Test func createRefusesAPathThroughASymbolicLink() throws {
        let t = try ScratchTable()
        let link = t.directory + "/via"
        let real = t.directory + "/real"
        try FileManager.default.createDirectory(atPath: real, withIntermediateDirectories: true)
        #expect(symlink(real, link) == 0)
        let r = try Proc.aspectctl(["create", "--table", link + "/table"])
        #expect(r.status == 65 && r.stderr.contains("would be reached through the symbolic link \(link)"), "\(r)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: real).isEmpty)
    }

    /// A table of ours that group or others can write is refused for use, and its message
    /// says to destroy it: destroy does (it once refused for the same reason).
    @Test func ourOwnGroupWritableTableCanBeDestroyed() throws {
        let t = try ScratchTable()
        #expect(chmod(t.name, 0o666) == 0)
        let list = try Proc.aspectctl(["list", "--table", t.name])
        #expect(list.status == 65 && list.stderr.contains("destroy and re-create it"), "\(list)")
        let r = try Proc.aspectctl(["destroy", "--table", t.name])
        #expect(r.status == 0 && !FileManager.default.fileExists(atPath: t.name), "\(r)")
    }
}

/// A flag set by one thread and read by another.
final class ManagedAtomicFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.lock(); defer { lock.unlock() }; return value }
    func set() { lock.lock(); value = true; lock.unlock() }
}
