// The Swift side's untrusted inputs, for libFuzzer (Fuzz/run.sh builds this file with the
// Swift layers' sources into one binary; FUZZ_TARGET picks the entry point):
//   json        JSONParser.parse on any bytes as UTF-8 text
//   rules       RulesFile.text + RuleDecoder + RuleCompiler (rules files, as `check` reads them)
//   prototype   PrototypeParser.parse (the "prototype" field of rules)
//   catalog     CatalogParser.parse (config/catalog.spec's format)
//   table-reader  a table made from these bytes (its segment, TableImage), read as `list`, `stats`, `events`,
//                 `run` and `explore` read it (TableSnapshot, Attachments, CallSiteTally)
// Errors are the expected answer to bad input; a crash, trap or sanitizer report is a finding.
#if canImport(Glibc)
import Glibc
#endif
import CAspectsABI

enum FuzzTarget: String { case json, rules, prototype, catalog, tableReader = "table-reader" }

let fuzzTarget: FuzzTarget = {
    guard let v = getenv("FUZZ_TARGET"), let t = FuzzTarget(rawValue: String(cString: v)) else {
        fputs("FUZZ_TARGET must be json, rules, prototype, catalog or table-reader\n", stderr)
        exit(2)
    }
    return t
}()

/// A private directory for table anchors (the trust rule wants a 0600 regular file of ours).
let fuzzDirectory: String = {
    var template = Array("/tmp/aspects-fuzz-XXXXXX".utf8CString)
    guard let p = mkdtemp(&template) else { exit(2) }
    return String(cString: p)
}()

/// The bytes of a small, valid table with a few rules and events, made once.
let pristineTable: [UInt8] = {
    let path = fuzzDirectory + "/pristine"
    guard let name = try? TableName(path),
          let table = try? AdviceTable.create(name, ruleCapacity: 4, eventCapacity: 16, statCapacity: 16),
          let rules = try? RuleDecoder(source: "seed").decode(#"[{"id":"a","symbol":"write","position":"instead","action":{"fail":"EIO"},"when":{"nth":3,"args":[{"arg":0,"eq":1}],"site":"app+0x10"}},{"id":"b","symbol":"open","position":"after","action":{"log":true},"when":{"args":[{"arg":0,"glob":"*.db"}],"process":"*sh"}},{"id":"p","symbol":"fx_scale","prototype":"struct pair fx_scale(struct pair p, double k)","types":{"struct pair":["double","double"]},"position":"after","action":{"log":true}}]"#),
          let compiled = try? RuleCompiler().compile(rules), (try? table.add(compiled)) != nil else { exit(2) }
    var out = TableImage.bytes(of: table)
    try? AdviceTable.destroy(name)
    addProcessRecords(&out)
    return out
}()

/// What processes add to a table, written as the preload writes it: three event records of
/// rule "a" (write), a statistics entry per rule and two attachment records — so that the
/// readers of events, `stats` by process and attachments start from valid records too.
func addProcessRecords(_ image: inout [UInt8]) {
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
            let eventOffset = MemoryLayout<aspects_event>.offset(of: \aspects_event.rule_id)!
            fill(e, bytes: Array("a".utf8) + [0], at: eventOffset)
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

func fuzzOne(_ bytes: UnsafeBufferPointer<UInt8>) {
    let text = String(decoding: bytes, as: UTF8.self)
    switch fuzzTarget {
    case .json:
        _ = try? JSONParser.parse(text)
    case .rules:
        // as `check`/`add` read a rules file: UTF-8 validated (the bad byte's line), decoded, compiled
        guard let checked = try? RulesFile.text(Array(bytes), path: "fuzz.json") else { return }
        if let rules = try? RuleDecoder(source: "fuzz").decode(checked) { _ = try? RuleCompiler().compile(rules) }
    case .prototype:
        _ = try? PrototypeParser().parse(text)
    case .catalog:
        _ = try? CatalogParser().parse(text)
    case .tableReader:
        readTable(patching: bytes)
    }
}

/// A small valid table with the input's patches over it: [offset u32 LE][length u8][bytes]...
/// — every field reachable, not only the header a random file would fail on. A patch at
/// offset 0xffffffff cuts the image to 64 × length bytes instead (a segment that small).
/// Shared with Tests/AspectsTests/Preload/FuzzRegressionTests.swift (same format, same reads).
func tableImage(patching bytes: UnsafeBufferPointer<UInt8>, over pristine: [UInt8]) -> [UInt8] {
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
    return image
}

func readTable(patching bytes: UnsafeBufferPointer<UInt8>) {
    let image = tableImage(patching: bytes, over: pristineTable)
    let path = fuzzDirectory + "/table"
    // FUZZ_DUMP_TABLE=FILE: leave the table an input makes there too (to look at a finding
    // with `aspectctl list --table FILE`; `aspectctl destroy --table FILE` removes it)
    if let dump = getenv("FUZZ_DUMP_TABLE") { _ = TableImage.plant(image, at: String(cString: dump)) }
    // a segment holding the image, named by an anchor (TableImage), removed after
    guard let shmid = TableImage.plant(image, at: path) else { return }
    defer { TableImage.remove(shmid) }
    guard let name = try? TableName(path) else { return }
    _ = AttachFailures.read(name)
    guard let table = try? AdviceTable.open(name) else { return }
    // what `list`, `list --all`, `stats` and their --json forms read and print
    for r in table.rules(includeRemoved: true) {
        _ = r.json
        _ = "\(r.id) \(r.position) \(r.symbol) \(r.actions) \(r.conditions) \(r.scope) \(r.matched) \(r.fired) \(r.byProcess.count) \(r.prototypeStatus ?? "")"
    }
    _ = table.rules(includeRemoved: false)
    // what `events` prints, and `run`/`explore` tally
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

@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    fuzzOne(UnsafeBufferPointer(start: data, count: size))
    return 0
}
