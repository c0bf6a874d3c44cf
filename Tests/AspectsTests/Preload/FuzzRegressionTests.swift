import CAspectsABI
import Foundation
import Testing
import AspectsCodegen
import AspectsCore
import AspectsRules
import AspectsTable

/// Every input the fuzzing campaign kept (Fuzz/corpus: what reached new code) and every input
/// that ever crashed a target (Fuzz/regressions), replayed through the same entry points as
/// Fuzz/swift/FuzzEntry.swift (Swift, in-process) and Fuzz/c/*_fuzz.c (C, `Fuzz/run.sh
/// --replay`): each must end in a value or a clean error, never a trap, a hang or a sanitizer
/// report. FUZZING.md describes the campaign.
///
/// A reproducer of a finding not fixed yet is listed in Fuzz/regressions/OPEN ("target/file
/// owner: what") and skipped here, so that one open finding does not take the whole suite
/// down with it (a trap ends the test process); `openFindingsAreReproducers` keeps the list
/// honest. Fixing one means deleting its line.
@Suite struct FuzzRegressionTests {
    static let swiftTargets = ["json", "rules", "prototype", "catalog", "table-reader"]

    /// "target/file" names of reproducers whose finding is still open.
    static let open: Set<String> = {
        guard let text = try? String(contentsOfFile: Paths.root + "/Fuzz/regressions/OPEN", encoding: .utf8) else { return [] }
        return Set(text.split(separator: "\n").compactMap { line in
            let t = line.trimmingCharacters(in: .whitespaces)
            guard !t.isEmpty, !t.hasPrefix("#") else { return nil }
            return t.split(separator: " ").first.map(String.init)
        })
    }()

    static func inputs(_ target: String) -> [(String, [UInt8])] {
        var out: [(String, [UInt8])] = []
        for dir in ["Fuzz/corpus/\(target)", "Fuzz/regressions/\(target)"] {
            let path = Paths.root + "/" + dir
            for name in ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted() {
                if dir.hasPrefix("Fuzz/regressions"), open.contains("\(target)/\(name)") { continue }
                if let data = FileManager.default.contents(atPath: path + "/" + name) { out.append((dir + "/" + name, [UInt8](data))) }
            }
        }
        return out
    }

    @Test(.tags(.fast), arguments: swiftTargets)
    func replay(target: String) throws {
        let inputs = Self.inputs(target)
        #expect(inputs.count >= 3, "Fuzz/corpus/\(target) holds \(inputs.count) inputs: run Fuzz/run.sh \(target)")
        let reader = target == "table-reader" ? try TableReaderReplay() : nil
        for (_, bytes) in inputs {
            let text = String(decoding: bytes, as: UTF8.self)
            switch target {
            case "json": _ = try? JSONParser.parse(text)
            case "rules":
                guard let checked = try? RulesFile.text(bytes, path: "fuzz.json") else { continue }
                if let rules = try? RuleDecoder(source: "fuzz").decode(checked) { _ = try? RuleCompiler().compile(rules) }
            case "prototype": _ = try? PrototypeParser().parse(text)
            case "catalog": _ = try? CatalogParser().parse(text)
            default: reader?.read(patching: bytes)
            }
        }
    }

    /// Every line of Fuzz/regressions/OPEN names a reproducer that exists.
    @Test(.tags(.fast)) func openFindingsAreReproducers() {
        for entry in Self.open {
            #expect(FileManager.default.fileExists(atPath: Paths.root + "/Fuzz/regressions/" + entry), "Fuzz/regressions/OPEN lists \(entry), which does not exist")
        }
    }

    /// The C targets (the preload's table reading, prototype signatures, the ELF walk) over
    /// their corpora and reproducers: built with clang's libFuzzer, ASan and UBSan, each input
    /// run once. Needs the toolchain's clang (the Swift toolchain ships it).
    @Test(.tags(.slow), .requires(FuzzRegressionTests.clangHasLibFuzzer, "clang with libFuzzer is not available"))
    func replayCTargets() throws {
        let r = try Proc.run("/bin/bash", [Paths.root + "/Fuzz/run.sh", "--replay", "table", "signature", "elf"])
        #expect(r.status == 0, "\(r)")
    }

    static var clangHasLibFuzzer: Bool {
        guard let r = try? Proc.run("/usr/bin/env", ["clang", "-print-file-name=libclang_rt.fuzzer-x86_64.a"]) else { return false }
        let path = r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        return r.status == 0 && path.hasPrefix("/") && FileManager.default.fileExists(atPath: path)
    }
}

/// The table-reader target's input, as Fuzz/swift/FuzzEntry.swift reads it (keep the two
/// alike): patches [offset u32 LE][length u8][bytes]... over a small valid table with three
/// rules (one a prototype rule), event records, statistics entries and attachments; a patch at
/// offset 0xffffffff cuts the image to 64 × length bytes (a segment of that size). The result is read as `list`,
/// `stats`, `events`, `run` and `explore` read a table.
final class TableReaderReplay {
    let directory: String
    let pristine: [UInt8]

    init() throws {
        var template = Array("/tmp/aspects-fuzz-replay-XXXXXX".utf8CString)
        guard let p = mkdtemp(&template) else { throw CocoaError(.fileWriteUnknown) }
        directory = String(cString: p)
        let path = directory + "/pristine"
        let table = try AdviceTable.create(try TableName(path), ruleCapacity: 4, eventCapacity: 16, statCapacity: 16)
        let rules = try RuleDecoder(source: "seed").decode(#"[{"id":"a","symbol":"write","position":"instead","action":{"fail":"EIO"},"when":{"nth":3,"args":[{"arg":0,"eq":1}],"site":"app+0x10"}},{"id":"b","symbol":"open","position":"after","action":{"log":true},"when":{"args":[{"arg":0,"glob":"*.db"}],"process":"*sh"}},{"id":"p","symbol":"fx_scale","prototype":"struct pair fx_scale(struct pair p, double k)","types":{"struct pair":["double","double"]},"position":"after","action":{"log":true}}]"#)
        _ = try table.add(try RuleCompiler().compile(rules))
        var bytes = TableImage.bytes(of: table)
        try AdviceTable.destroy(table.name)
        Self.addProcessRecords(&bytes)
        pristine = bytes
    }

    deinit { TableSegments.removeScratch(directory) }

    func read(patching bytes: [UInt8]) {
        var image = pristine
        var i = 0
        while i + 5 <= bytes.count {
            let offset = Int(bytes[i]) | Int(bytes[i + 1]) << 8 | Int(bytes[i + 2]) << 16 | Int(bytes[i + 3]) << 24
            let length = Int(bytes[i + 4])
            i += 5
            if offset == 0xffff_ffff {
                image.removeLast(max(0, image.count - 64 * length))
                continue
            }
            guard !image.isEmpty else { break }
            for k in 0..<length where i + k < bytes.count && offset % image.count + k < image.count {
                image[offset % image.count + k] = bytes[i + k]
            }
            i += length
        }
        let path = directory + "/table"
        guard let shmid = TableImage.plant(image, at: path) else { return }
        defer { TableImage.remove(shmid) }
        guard let name = try? TableName(path) else { return }
        _ = AttachFailures.read(name)
        guard let table = try? AdviceTable.open(name) else { return }
        for r in table.rules(includeRemoved: true) {
            _ = r.json
            _ = "\(r.id) \(r.position) \(r.symbol) \(r.actions) \(r.conditions) \(r.scope) \(r.matched) \(r.fired) \(r.byProcess.count) \(r.prototypeStatus ?? "")"
        }
        _ = table.rules(includeRemoved: false)
        let batch = table.events(from: 0)
        for e in batch.events {
            _ = e.json
            _ = "\(e.pid) \(e.tid) \(e.rule) \(e.kind) \(e.position) \(e.symbol) \(e.arguments) \(e.callNumber) \(e.returnText) \(e.errnoName ?? "") \(e.site.map { "\($0)" } ?? "")"
        }
        _ = table.events(from: batch.next)
        _ = table.events(from: UInt64.max - 3)
        _ = table.callSites()
        _ = table.attachments()
        _ = table.attachCount
        _ = table.attachFailures
    }

    /// FuzzEntry.swift's addProcessRecords: what processes add to a table.
    static func addProcessRecords(_ image: inout [UInt8]) {
        image.withUnsafeMutableBytes { raw in
            let base = raw.baseAddress!
            let h = base.assumingMemoryBound(to: aspects_table_header.self)
            let groups = h.pointee.group_capacity, rules = h.pointee.rule_capacity
            let events = h.pointee.event_capacity, stats = h.pointee.stat_capacity
            func fill<T>(_ p: UnsafeMutablePointer<T>, bytes: [UInt8], at offset: Int) {
                let q = UnsafeMutableRawPointer(p) + offset
                for (i, b) in bytes.enumerated() { q.storeBytes(of: b, toByteOffset: i, as: UInt8.self) }
            }
            let ev = (base + Int(aspects_events_offset(groups, rules))).assumingMemoryBound(to: aspects_event.self)
            for i in 0..<3 {
                let e = ev + i
                e.pointee.time_ns = 1_790_000_000_000_000_000 + UInt64(i)
                e.pointee.pid = 4242
                e.pointee.tid = 4243
                e.pointee.rule_serial = 1
                e.pointee.call_number = UInt64(3 + i)
                e.pointee.ret = i == 0 ? -1 : 5
                e.pointee.err = i == 0 ? 5 : 0
                e.pointee.kind = UInt16(i == 2 ? 0 : 1)
                e.pointee.position = 1
                e.pointee.arg_count = 3
                e.pointee.rule_slot = 0
                e.pointee.group = 5
                e.pointee.export_index = 13
                e.pointee.arg_types = (5, 9, 8, 0, 0, 0, 0, 0)
                e.pointee.ret_type = 7
                e.pointee.string_arg = i == 1 ? 1 : 0xff
                e.pointee.args = (1, 0x7fff0000, 5, 0, 0, 0)
                e.pointee.caller_offset = 0x10
                fill(e, bytes: Array("a".utf8) + [0], at: MemoryLayout<aspects_event>.offset(of: \aspects_event.rule_id)!)
                fill(e, bytes: Array("hello".utf8) + [0], at: MemoryLayout<aspects_event>.offset(of: \aspects_event.string)!)
                fill(e, bytes: Array("app".utf8) + [0], at: MemoryLayout<aspects_event>.offset(of: \aspects_event.caller_object)!)
                e.pointee.seq = UInt64(2 * i + 2)
            }
            h.pointee.event_head = 3
            if stats > 0 {
                let st = (base + Int(aspects_stats_offset(groups, rules, events))).assumingMemoryBound(to: aspects_process_stat.self)
                for serial in [UInt64(1), 2] {
                    let e = st + Int(serial)
                    e.pointee.key = serial << 22 | 4242
                    e.pointee.pid = 4242
                    e.pointee.slot = UInt32(serial - 1)
                    e.pointee.matched = 7
                    e.pointee.fired = 2
                }
            }
            let at = (base + Int(aspects_attachments_offset(groups, rules, events, stats))).assumingMemoryBound(to: aspects_attachment.self)
            for i in 0..<2 {
                let a = at + i
                a.pointee.pid = UInt32(4242 + i)
                a.pointee.ppid = 1
                a.pointee.uid = getuid()
                a.pointee.hierarchy = 0x1234
                a.pointee.attached_ns = 1_790_000_000_000_000_000
                a.pointee.start_ticks = 100
                fill(a, bytes: Array("/usr/bin/app".utf8) + [0], at: MemoryLayout<aspects_attachment>.offset(of: \aspects_attachment.program)!)
                a.pointee.seq = 2
            }
            h.pointee.attach_head = 2
        }
    }
}
