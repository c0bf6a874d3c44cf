import Foundation
import Testing
import AspectsCore

/// `aspectctl calls -- CMD`: which catalog functions a run of real programs calls, with counts,
/// families, call sites and programs, so that a rule targets what the program does. What the
/// programs do is checked against strace where it counts system calls one for one.
@Suite struct CallsCommandTests {
    /// A private directory with a file to copy, removed at the end.
    final class Scratch {
        let dir = NSTemporaryDirectory() + "aspects-calls-\(UUID().uuidString)"
        var file: String { dir + "/in.txt" }
        init() throws {
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            try String(repeating: "a line of text\n", count: 200).write(toFile: file, atomically: false, encoding: .utf8)
        }
        deinit { TableSegments.removeScratch(dir) }
    }

    /// What `calls --json` said: function → calls, program → function → calls, and the document.
    struct Seen {
        var doc: JSONNode
        var calls: [String: Int] = [:]
        var families: [String: String] = [:]
        var byProgram: [String: [String: Int]] = [:]
        var notes: [String] = []
    }

    static func calls(_ command: [String], options: [String] = [], directory: String? = nil) throws -> (Outcome, Seen) {
        let r = try Proc.run(Paths.aspectctl, ["calls", "--json"] + options + ["--"] + command, directory: directory)
        let doc = try JSONParser.parse(r.stdout)
        var seen = Seen(doc: doc)
        if case .array(let fs)? = doc["functions"]?.value {
            for f in fs {
                guard case .string(let name)? = f["function"]?.value, case .number(let n)? = f["calls"]?.value else { continue }
                seen.calls[name] = Int(n)
                if case .string(let family)? = f["family"]?.value { seen.families[name] = family }
            }
        }
        if case .array(let ps)? = doc["programs"]?.value {
            for p in ps {
                guard case .string(let program)? = p["program"]?.value, case .array(let fs)? = p["functions"]?.value else { continue }
                for f in fs {
                    guard case .string(let name)? = f["function"]?.value, case .number(let n)? = f["calls"]?.value else { continue }
                    seen.byProgram[program, default: [:]][name] = Int(n)
                }
            }
        }
        if case .array(let ns)? = doc["notes"]?.value {
            seen.notes = ns.compactMap { if case .string(let s) = $0.value { return s } else { return nil } }
        }
        return (r, seen)
    }

    static let strace = ["/usr/bin/strace", "/bin/strace"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// System calls of `names` a command makes (strace -f), by name.
    static func syscalls(_ names: [String], _ command: [String], directory: String) throws -> [String: Int] {
        let log = directory + "/strace.log"
        let r = try Proc.run(strace!, ["-f", "-qq", "-o", log, "-e", "trace=" + names.joined(separator: ",")] + command, directory: directory)
        #expect(r.status == 0, "\(r)")
        var out: [String: Int] = [:]
        for line in try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n") {
            // "1234 copy_file_range(3, NULL, ...) = 6"
            guard let call = line.split(separator: " ").dropFirst().first, let paren = call.firstIndex(of: "(") else { continue }
            out[String(call[..<paren]), default: 0] += 1
        }
        return out
    }

    /// cat copies with copy_file_range on this machine (coreutils 9, output a file): no write,
    /// so a rule on write never matches it. The count is strace's.
    @Test(.tags(.realPrograms)) func catCopiesWithCopyFileRange() throws {
        let s = try Scratch()
        let (r, seen) = try Self.calls(["cat", s.file])
        #expect(r.status == 0, "\(r)")
        if Self.strace != nil {
            let sys = try Self.syscalls(["copy_file_range", "read", "write"], ["/bin/sh", "-c", "cat \(s.file) > out.txt"], directory: s.dir)
            #expect(seen.calls["copy_file_range"] == sys["copy_file_range"], "\(seen.calls) vs strace \(sys)")
            #expect(seen.calls["write"] == nil && sys["write"] == nil, "\(seen.calls) vs strace \(sys)")
        }
        #expect((seen.calls["copy_file_range"] ?? 0) > 0 || ((seen.calls["read"] ?? 0) > 0 && (seen.calls["write"] ?? 0) > 0), "\(seen.calls)")
        #expect(seen.byProgram.keys.contains { $0.hasSuffix("/cat") }, "\(seen.byProgram)")
        // the readable table says the same, sorted by count, with the family column
        let text = try Proc.aspectctl(["calls", "--", "cat", s.file])
        #expect(text.status == 0, "\(text)")
        #expect(text.stdout.contains("\ncopy_file_range "), "\(text.stdout)")
        #expect(text.stdout.contains("cat+0x"), "call sites: \(text.stdout)")
        let counts = text.stdout.split(separator: "\n").drop { !$0.hasPrefix("function ") }.dropFirst()
            .prefix { !$0.isEmpty }.compactMap { line in line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap { Int($0) } }
        #expect(counts.count >= 2 && counts == counts.sorted(by: >), "\(text.stdout)")
    }

    /// sqlite3 writes its pages with pwrite64 and makes them durable with fdatasync: the write
    /// and sync families, by the names it calls.
    @Test(.tags(.realPrograms), .requires(FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3"), "needs sqlite3 (.ci/run installs it)"))
    func sqliteWritesWithPwriteAndSyncsWithFdatasync() throws {
        let s = try Scratch()
        let sql = "create table t(x); insert into t values(1); insert into t values(2);"
        let (r, seen) = try Self.calls(["sqlite3", "a.db", sql], directory: s.dir)
        #expect(r.status == 0, "\(r)")
        #expect(seen.families["pwrite"] == "write" && seen.families["fdatasync"] == "sync", "\(seen.families)")
        #expect(seen.calls["write"] == nil, "\(seen.calls)")
        guard case .array(let fs)? = seen.doc["functions"]?.value,
              let pwrite = fs.first(where: { $0["function"]?.value == .string("pwrite") }),
              case .array(let names)? = pwrite["calledAs"]?.value else { Issue.record("no pwrite: \(r.stdout)"); return }
        #expect(names.contains { $0["name"]?.value == .string("pwrite64") }, "\(r.stdout)")
        if Self.strace != nil {
            let sys = try Self.syscalls(["pwrite64", "fdatasync", "write"], ["sqlite3", "b.db", sql], directory: s.dir)
            #expect(seen.calls["pwrite"] == sys["pwrite64"] && seen.calls["fdatasync"] == sys["fdatasync"], "\(seen.calls) vs strace \(sys)")
        }
        let text = try Proc.aspectctl(["calls", "--", "sqlite3", s.dir + "/c.db", sql])
        #expect(text.stdout.contains("pwrite (as pwrite64)"), "\(text.stdout)")
    }

    /// A pipeline: each program of the tree on its own, with its own functions.
    @Test(.tags(.realPrograms)) func aShellPipelineIsCountedPerProgram() throws {
        let s = try Scratch()
        let (r, seen) = try Self.calls(["sh", "-c", "cat in.txt | gzip -c > out.gz"], directory: s.dir)
        #expect(r.status == 0, "\(r)")
        let programs = seen.byProgram.keys.map { ($0 as NSString).lastPathComponent }
        for p in ["cat", "gzip"] { #expect(programs.contains(p), "\(seen.byProgram.keys)") }
        #expect(programs.contains { $0 == "dash" || $0 == "sh" || $0 == "bash" }, "\(seen.byProgram.keys)")
        let cat = seen.byProgram.first { $0.key.hasSuffix("/cat") }?.value ?? [:]
        let gzip = seen.byProgram.first { $0.key.hasSuffix("/gzip") }?.value ?? [:]
        // into a pipe cat reads and writes; gzip reads the pipe and writes the file
        #expect((cat["read"] ?? 0) > 0 && (cat["write"] ?? 0) + (cat["copy_file_range"] ?? 0) + (cat["splice"] ?? 0) > 0, "\(cat)")
        #expect((gzip["read"] ?? 0) > 0 && (gzip["write"] ?? 0) > 0, "\(gzip)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: s.dir + "/out.gz")).count > 10, "the command ran for real, in the current directory")
        if case .number(let n)? = seen.doc["processes"]?.value { #expect(Int(n)! >= 3) } else { Issue.record("no processes: \(r.stdout)") }
        let text = try Proc.run(Paths.aspectctl, ["calls", "--", "sh", "-c", "cat in.txt | gzip -c > out2.gz"], directory: s.dir)
        #expect(text.stdout.contains("\nby program:\n"), "\(text.stdout)")
        #expect(text.stdout.contains("/gzip (1 process): "), "\(text.stdout)")
    }

    /// One pid that runs many images (a script that execs itself, then cat), each calling its
    /// own functions: every call is still counted under the program that made it. (The
    /// preload's statistics entries of one pid once all hashed to the same 64 slots, so the
    /// later images of such a chain were counted under no program.)
    @Test func everyCallHasItsProgramAlongAChainOfExecs() throws {
        let s = try Scratch()
        let script = s.dir + "/chain.sh"
        try "n=${1:-0}\nif [ \"$n\" -gt 0 ]; then exec bash \(script) $((n-1)); fi\nexec cat \(s.file)\n"
            .write(toFile: script, atomically: false, encoding: .utf8)
        let (r, seen) = try Self.calls(["bash", script, "10"], directory: s.dir)
        #expect(r.status == 0, "\(r)")
        let total = seen.calls.values.reduce(0, +)
        let attributed = seen.byProgram.values.flatMap(\.values).reduce(0, +)
        #expect(total > 0 && attributed == total, "\(attributed) of \(total) calls have a program: \(seen.byProgram.keys)")
        #expect(seen.byProgram.keys.contains { $0.hasSuffix("/cat") }, "\(seen.byProgram.keys)")
        guard case .array(let programs)? = seen.doc["programs"]?.value,
              let bash = programs.first(where: { $0["program"]?.value == .string("/usr/bin/bash") }) else { Issue.record("no bash: \(r.stdout)"); return }
        #expect(bash["processes"]?.value == .number("11"), "eleven images of bash: \(r.stdout.prefix(2000))")
    }

    /// curl writes what it fetches with fwrite: its write(2) happens inside libc, where no
    /// preload reaches; calls names the stdio functions to rule on instead.
    @Test(.tags(.realPrograms), .requires(FileManager.default.isExecutableFile(atPath: "/usr/bin/curl"), "needs curl"))
    func stdioOutputIsNamed() throws {
        let s = try Scratch()
        let (r, seen) = try Self.calls(["curl", "-s", "file://" + s.file])
        #expect(r.status == 0, "\(r)")
        #expect((seen.calls["fwrite"] ?? 0) > 0, "\(seen.calls)")
        #expect(seen.notes.contains { $0.contains("fwrite") && $0.contains("inside libc") && $0.contains("rule on fwrite") }, "\(seen.notes)")
        let text = try Proc.aspectctl(["calls", "--", "curl", "-s", "file://" + s.file])
        #expect(text.stdout.contains("note: ") && text.stdout.contains("rule on fwrite"), "\(text.stdout)")
    }

    static let staticLibc = FileManager.default.fileExists(atPath: "/usr/lib/x86_64-linux-gnu/libc.a")

    /// A static program: said before, and afterwards that nothing was seen (exit status 1).
    @Test(.tags(.realPrograms), .requires(staticLibc, "needs libc.a (Debian: libc6-dev) for static fixtures"))
    func aStaticProgramShowsNothingAndSaysWhy() throws {
        let bin = try Fixture.build("open_calls", flags: ["-static-pie"])
        let r = try Proc.aspectctl(["calls", "--", bin, "/dev/null", "1"])
        #expect(r.status == 1, "\(r)")
        #expect(r.stderr.contains("\(bin) is statically linked"), "\(r)")
        #expect(r.stdout.contains("no process attached the table"), "\(r)")
        let (j, seen) = try Self.calls([bin, "/dev/null", "1"])
        #expect(j.status == 1 && seen.calls.isEmpty, "\(j)")
        if case .number(let n)? = seen.doc["processes"]?.value { #expect(n == "0") } else { Issue.record("no processes: \(j.stdout)") }
    }

    @Test(.tags(.realPrograms)) func topAllAndUsage() throws {
        let s = try Scratch()
        let one = try Proc.aspectctl(["calls", "--top", "1", "--", "sh", "-c", "cat \(s.file) | cat > /dev/null"])
        #expect(one.status == 0, "\(one)")
        let rows = one.stdout.split(separator: "\n", omittingEmptySubsequences: false).drop { !$0.hasPrefix("function ") }.dropFirst().prefix { !$0.isEmpty }
        #expect(rows.count == 2 && rows.last!.contains("more; --all lists every one"), "\(one.stdout)")
        let all = try Proc.aspectctl(["calls", "--all", "--", "sh", "-c", "cat \(s.file) | cat > /dev/null"])
        #expect(!all.stdout.contains("--all lists every one"), "\(all.stdout)")
        // the command comes after --; options stay aspectctl's
        #expect(try Proc.aspectctl(["calls"]).status == 64)
        #expect(try Proc.aspectctl(["calls", "cat", s.file]).status == 64)
        #expect(try Proc.aspectctl(["calls", "--top", "0", "--", "true"]).status == 64)
        let missing = try Proc.aspectctl(["calls", "--", "no-such-program-\(getpid())"])
        #expect(missing.status == 66 && missing.stderr.contains("is not found on PATH"), "\(missing)")
    }

    @Test func jsonFitsItsSchema() throws {
        let s = try Scratch()
        let schema = SchemaValidator(root: try JSONParser.parse(try String(contentsOfFile: Paths.root + "/config/calls.schema.json", encoding: .utf8)))
        for command in [["sh", "-c", "cat in.txt | gzip -c > out.gz"], ["false"]] {
            let (r, seen) = try Self.calls(command, directory: s.dir)
            let problems = schema.validate(seen.doc)
            #expect(problems.isEmpty, "\(command): \(problems)\n\(r.stdout)")
        }
    }
}
