import Foundation
import Testing
import CAspectsABI
import AspectsRules

private let stdioStrace = ["/usr/bin/strace", "/bin/strace"].first { FileManager.default.isExecutableFile(atPath: $0) }

/// A stdio fault leaves the stream exactly as a failing read(2)/write(2) under it does
/// (docs/catalog.md, "stdio"): for each stdio function of the catalog, the probe
/// (Tests/Fixtures/Catalog/stdio_probe.c) reports everything a program sees — result, errno, ferror,
/// feof, ftell, a retry, what reached the file — once with aspects' `"fail"` on the call and
/// once with strace failing the call's own system call (`-e inject=read:error=EIO:when=N`);
/// the two reports must be the same. A call that makes no system call cannot fail for real:
/// the fault does not take, and the report is the unfaulted run's.
@Suite(.requires(stdioStrace != nil, "needs strace (.ci/run installs it)"))
struct StdioFaultTests {
    static let strace = stdioStrace
    static let functions = ["fread", "fgets", "getline", "getdelim", "fgetc", "getchar", "fwrite", "fputs", "fputc", "puts", "putchar", "fflush", "fclose"]

    static func reads(_ function: String) -> Bool { ["fread", "fgets", "getline", "getdelim", "fgetc", "getchar"].contains(function) }

    /// The stream's descriptor in the probe: stdin's, stdout's, or 42.
    static func descriptor(_ function: String) -> Int { function == "getchar" ? 0 : ["puts", "putchar"].contains(function) ? 1 : 42 }

    /// A fresh directory with the data file the reading probes read.
    static func directory() throws -> String {
        let dir = NSTemporaryDirectory() + "aspects-stdio-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try "alpha\nbeta\ngamma\n".write(toFile: dir + "/data.txt", atomically: false, encoding: .utf8)
        return dir
    }

    /// The number of `call`'s system calls up to the first on descriptor `fd` (the stream's), as
    /// strace's `when=` counts them, in a run of the command without a fault.
    static func nth(_ call: String, _ command: [String], fd: Int = 42, in dir: String) throws -> Int? {
        let log = dir + "/strace-\(UUID().uuidString).log"
        _ = try Proc.run(strace!, ["-f", "-qq", "-o", log, "-e", "trace=" + call] + command, directory: dir)
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").filter { $0.contains(call + "(") }
        return lines.firstIndex { $0.contains(call + "(\(fd),") || $0.contains(call + "(\(fd))") }.map { $0 + 1 }
    }

    static func aspects(_ rule: String, _ command: [String], in dir: String) throws -> Outcome {
        try Proc.run(Paths.aspectctl, ["run", "--rule", rule, "--"] + command, directory: dir)
    }

    @Test(.tags(.realPrograms), arguments: functions)
    func aFaultOnTheSystemCallIsWhatStraceGives(_ function: String) throws {
        let probe = try Fixture.build("stdio_probe")
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let call = Self.reads(function) ? "read" : "write"
        let file = Self.reads(function) ? "data.txt" : "out.txt"
        let command = [probe, function, "syscall", file]
        let n = try #require(try Self.nth(call, command, fd: Self.descriptor(function), in: dir), "the probe's \(function) makes its \(call)(2)")
        let real = try Proc.run(Self.strace!, ["-f", "-qq", "-o", "/dev/null", "-e", "trace=\(call)", "-e", "inject=\(call):error=EIO:when=\(n)"] + command,
                                directory: dir)
        let fault = try Self.aspects("{\"symbol\":\"\(function)\",\"action\":{\"fail\":\"EIO\"},\"when\":{\"nth\":1}}", command, in: dir)
        #expect(real.stdout.contains("errno=EIO"), "strace's fault reached the call: \(real)")
        #expect(fault.stdout == real.stdout, "aspects:\n\(fault.stdout)\nstrace:\n\(real.stdout)")
    }

    /// fclose with nothing to flush: its only system call is close(2), which reports its error
    /// after the descriptor is gone (the catalog's `fails: after`).
    @Test(.tags(.realPrograms)) func fcloseWithNothingPendingFailsAsItsCloseDoes() throws {
        let probe = try Fixture.build("stdio_probe")
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let command = [probe, "fclose", "buffered", "out.txt"]
        let n = try #require(try Self.nth("close", command, in: dir))
        let real = try Proc.run(Self.strace!, ["-f", "-qq", "-o", "/dev/null", "-e", "trace=close", "-e", "inject=close:error=EIO:when=\(n)"] + command, directory: dir)
        let fault = try Self.aspects(#"{"symbol":"fclose","action":{"fail":"EIO"}}"#, command, in: dir)
        #expect(real.stdout.contains("result=-1 errno=EIO"))
        #expect(fault.stdout == real.stdout, "aspects:\n\(fault.stdout)\nstrace:\n\(real.stdout)")
    }

    /// A read served from the buffer, a write that fits it, fflush and fclose with nothing to
    /// write: no system call, so no real error — the fault does not take.
    @Test(.tags(.realPrograms), arguments: functions.filter { $0 != "fclose" })
    func aCallWithoutASystemCallRunsAsItDoes(_ function: String) throws {
        let probe = try Fixture.build("stdio_probe")
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let command = [probe, function, "buffered", Self.reads(function) ? "data.txt" : "out.txt"]
        let plain = try Proc.run(probe, Array(command.dropFirst()), directory: dir)
        let fault = try Self.aspects("{\"symbol\":\"\(function)\",\"action\":{\"fail\":\"EIO\"},\"when\":{\"nth\":1}}", command, in: dir)
        #expect(fault.stdout == plain.stdout, "aspects:\n\(fault.stdout)\nunfaulted:\n\(plain.stdout)")
        #expect(fault.stderr.contains("never fired"), "the fault did not take: \(fault.stderr)")
    }

    /// A stream without a descriptor (fmemopen) fails as glibc leaves one whose read or write
    /// function failed: the error indicator and the failure value.
    @Test(.tags(.realPrograms), arguments: ["fread", "fwrite", "fflush"])
    func aStreamWithoutADescriptorGetsItsErrorIndicator(_ function: String) throws {
        let probe = try Fixture.build("stdio_probe")
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let fault = try Self.aspects("{\"symbol\":\"\(function)\",\"action\":{\"fail\":\"EIO\"},\"when\":{\"nth\":1}}",
                                     [probe, function, "memory", "-"], in: dir)
        let first = fault.stdout.split(separator: "\n").first.map(String.init) ?? ""
        #expect(first.hasPrefix("call: result=\(function == "fflush" ? -1 : 0) errno=EIO ferror=1 feof=0"), "\(fault)")
    }

    /// `"fail": true` picks the default of what the descriptor is: ENOSPC writing a file,
    /// EPIPE writing a pipe (never ENOSPC).
    @Test(.tags(.realPrograms)) func theDefaultErrorIsTheDescriptors() throws {
        let probe = try Fixture.build("stdio_probe")
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let rule = #"{"symbol":"fwrite","action":{"fail":true},"when":{"nth":1}}"#
        let file = try Self.aspects(rule, [probe, "fwrite", "syscall", "out.txt"], in: dir)
        #expect(file.stdout.hasPrefix("call: result=0 errno=ENOSPC ferror=1"), "\(file)")
        let pipe = try Self.aspects(rule, ["/bin/sh", "-c", "'\(probe)' fwrite syscall /dev/stdout | cat"], in: dir)
        #expect(pipe.stdout.contains("call: result=0 errno=EPIPE ferror=1"), "\(pipe)")
        // fclose reports after it freed the stream: its kind is read before
        let close = try Self.aspects(#"{"symbol":"fclose","action":{"fail":true}}"#,
                                     ["/bin/sh", "-c", "'\(probe)' fclose syscall /dev/stdout | cat"], in: dir)
        #expect(close.stdout.hasPrefix("call: result=-1 errno=EPIPE"), "\(close)")
    }

    /// sed -i under a getdelim fault reports the read error and leaves the file, as the same
    /// EIO on its read(2) does (before the stream model: the file emptied, exit 0).
    @Test(.tags(.realPrograms), .requires(FileManager.default.isExecutableFile(atPath: "/bin/sed"), "needs sed"))
    func sedReportsTheReadErrorAsUnderStrace() throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let text = "foo 1\nfoo 2\n"
        let command = ["/bin/sed", "-i", "s/foo/bar/", "f.txt"]
        try text.write(toFile: dir + "/f.txt", atomically: false, encoding: .utf8)
        let log = dir + "/sed.log"
        _ = try Proc.run(Self.strace!, ["-f", "-qq", "-o", log, "-e", "trace=read"] + command, directory: dir)
        let n = try #require(try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").firstIndex { $0.contains("\"foo 1") }) + 1
        try text.write(toFile: dir + "/f.txt", atomically: false, encoding: .utf8)
        let real = try Proc.run(Self.strace!, ["-f", "-qq", "-o", "/dev/null", "-e", "trace=read", "-e", "inject=read:error=EIO:when=\(n)"] + command, directory: dir)
        let realFile = try String(contentsOfFile: dir + "/f.txt", encoding: .utf8)
        try text.write(toFile: dir + "/f.txt", atomically: false, encoding: .utf8)
        let fault = try Proc.run(Paths.aspectctl, ["run", "--inject", "getdelim:error=EIO", "--"] + command, directory: dir)
        let faultFile = try String(contentsOfFile: dir + "/f.txt", encoding: .utf8)
        #expect(real.status == 4 && realFile == text && real.stderr.contains("read error on f.txt: Input/output error"), "\(real)")
        #expect(fault.status == real.status && faultFile == realFile, "\(fault)")
        #expect(fault.stderr.contains("sed: read error on f.txt: Input/output error"), "\(fault)")
    }
}

/// Where each default fault comes from: the catalog's `default:` by descriptor kind, flagged
/// for the preload to decide at the call; the stream model only at the catalog's place.
struct DefaultFaultTests {
    static func compiled(_ json: String) throws -> CompiledRule {
        try #require(try RuleCompiler().compile(try RuleDecoder(source: "test").decode(json)).first)
    }

    @Test func defaultsNameTheErrorOfWhatTheDescriptorIs() throws {
        let g = Catalog.builtIn.group(of: try #require(Catalog.builtIn.function(named: "write")))
        #expect(g.defaultErrno == "ENOSPC" && g.defaultByKind == [.file: "ENOSPC", .pipe: "EPIPE", .socket: "ECONNRESET"])
        let read = Catalog.builtIn.group(of: try #require(Catalog.builtIn.function(named: "read")))
        #expect(read.defaultByKind[.socket] == "ECONNRESET")
        // a valid DIR* fails with EIO (getdents64), not EBADF
        let readdir = Catalog.builtIn.group(of: try #require(Catalog.builtIn.function(named: "readdir")))
        #expect(readdir.defaultErrno == "EIO")
        let byKind = try Self.compiled(#"{"symbol":"write","action":{"fail":true}}"#)
        #expect(byKind.flags & ASPECTS_RULE_DEFAULT_BY_KIND.rawValue != 0 && byKind.errnoValue == ENOSPC)
        let named = try Self.compiled(#"{"symbol":"write","action":{"fail":"ENOSPC"}}"#)
        #expect(named.flags & ASPECTS_RULE_DEFAULT_BY_KIND.rawValue == 0)
    }

    @Test func theStreamModelIsTheCatalogsFailureOnly() throws {
        for f in ["fread", "fgets", "fgetc", "getc", "getline", "getdelim", "__getdelim", "fwrite", "fwrite_unlocked", "fputs", "fputc", "putc", "fflush"] {
            #expect(try Self.compiled("{\"symbol\":\"\(f)\",\"action\":{\"fail\":\"EIO\"}}").flags & ASPECTS_RULE_STREAM_FAULT.rawValue != 0, "\(f)")
        }
        #expect(try Self.compiled(#"{"symbol":"fclose","action":{"fail":"EIO"}}"#).flags & ASPECTS_RULE_STREAM_FAULT.rawValue != 0)
        // fclose instead of its work, and an explicit return value, stay literal
        #expect(try Self.compiled(#"{"symbol":"fclose","position":"instead","action":{"fail":"EIO"}}"#).flags & ASPECTS_RULE_STREAM_FAULT.rawValue == 0)
        #expect(try Self.compiled(#"{"symbol":"fwrite","position":"instead","action":{"return":0,"errno":"EIO"}}"#).flags & ASPECTS_RULE_STREAM_FAULT.rawValue == 0)
    }
}
