// The Swift side's untrusted inputs, for libFuzzer (Fuzz/run.sh builds this file with the
// AspectConfig sources into one binary; FUZZ_TARGET picks the entry point):
//   json        JSONParser.parse on any bytes as UTF-8 text
//   rules       RuleDecoder + RuleCompiler (rules files, as `check` reads them)
//   prototype   PrototypeParser.parse (the "prototype" field of rules)
//   catalog     CatalogParser.parse (config/catalog.spec's format)
//   table       a table file of these bytes, as `list`, `events` and `stats` read it
// Errors are the expected answer to bad input; a crash, trap or sanitizer report is a finding.
#if canImport(Glibc)
import Glibc
#endif

enum FuzzTarget: String { case json, rules, prototype, catalog, table }

let fuzzTarget: FuzzTarget = {
    guard let v = getenv("FUZZ_TARGET"), let t = FuzzTarget(rawValue: String(cString: v)) else {
        fputs("FUZZ_TARGET must be json, rules, prototype, catalog or table\n", stderr)
        exit(2)
    }
    return t
}()

/// A private directory for table files (the trust rule wants a 0600 regular file of ours).
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
          let rules = try? RuleDecoder(source: "seed").decode(#"[{"id":"a","symbol":"write","position":"instead","action":{"fail":"EIO"},"when":{"nth":3,"args":[{"arg":0,"eq":1}],"site":"app+0x10"}},{"id":"b","symbol":"open","position":"after","action":{"log":true},"when":{"args":[{"arg":0,"glob":"*.db"}],"process":"*sh"}}]"#),
          let compiled = try? RuleCompiler().compile(rules), (try? table.add(compiled)) != nil else { exit(2) }
    _ = table
    let fd = open(path, O_RDONLY)
    var st = stat()
    fstat(fd, &st)
    var out = [UInt8](repeating: 0, count: Int(st.st_size))
    _ = out.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
    close(fd)
    return out
}()

func fuzzOne(_ bytes: UnsafeBufferPointer<UInt8>) {
    let text = String(decoding: bytes, as: UTF8.self)
    switch fuzzTarget {
    case .json:
        _ = try? JSONParser.parse(text)
    case .rules:
        if let rules = try? RuleDecoder(source: "fuzz").decode(text) { _ = try? RuleCompiler().compile(rules) }
    case .prototype:
        _ = try? PrototypeParser().parse(text)
    case .catalog:
        _ = try? CatalogParser().parse(text)
    case .table:
        // A small valid table with the input's patches over it: [offset u32 LE][length u8][bytes]...
        // — every field reachable, not only the header a random file would fail on.
        var image = pristineTable
        var i = 0
        while i + 5 <= bytes.count {
            let offset = Int(bytes[i]) | Int(bytes[i + 1]) << 8 | Int(bytes[i + 2]) << 16 | Int(bytes[i + 3]) << 24
            let length = Int(bytes[i + 4])
            i += 5
            for k in 0..<length where i + k < bytes.count && offset % image.count + k < image.count {
                image[offset % image.count + k] = bytes[i + k]
            }
            i += length
        }
        let path = fuzzDirectory + "/table"
        let fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return }
        _ = image.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        guard let name = try? TableName(path), let table = try? AdviceTable.open(name) else { return }
        _ = table.rules(includeRemoved: true)
        _ = table.events(from: 0)
        _ = table.callSites()
        _ = table.attachments()
        _ = table.attachFailures
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    fuzzOne(UnsafeBufferPointer(start: data, count: size))
    return 0
}
