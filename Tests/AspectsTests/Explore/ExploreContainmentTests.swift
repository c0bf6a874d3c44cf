import Foundation
import Testing
import AspectsCore
import AspectsExplore

/// Bounded and contained runs (issue 23, item 10): a run's output is kept as a bounded tail,
/// its size and digest (its file capped), so memory and disk stay small whatever it writes,
/// while outcomes still compare whole outputs; whatever a run leaves running (a setsid daemon
/// ignoring SIGTERM) is killed after it and named; `--keep-work` keeps every run's directory.
@Suite(.serialized) struct ExploreContainmentTests {
    final class Scratch {
        let path = NSTemporaryDirectory() + "aspects-contain-\(UUID().uuidString)"
        init() throws { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }
        deinit { try? FileManager.default.removeItem(atPath: path) }
    }

    func explore(_ options: [String], _ command: [String], in s: Scratch) throws -> (Outcome, JSONNode?) {
        try ExploreCLI.run(options + ["--progress", "never"], command, out: s.path + "/out", json: s.path + "/explore.json", directory: s.path)
    }


    static func fileSize(_ path: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue
    }

    // MARK: - bounded output

    /// A run writing more than the cap: the record keeps the tail (the true end of the stream),
    /// the file the first 16 MiB; the size and digest cover every byte.
    @Test func aRunsOutputIsATailASizeAndADigest() throws {
        let s = try Scratch()
        let r = try ProgramRun(argv: ["/bin/sh", "-c", "head -c 17825792 /dev/zero | tr '\\0' x; echo END; echo oops >&2"],
                               environment: ProcessInfo.processInfo.environment, directory: s.path, timeout: 120)
            .run(outputPrefix: s.path + "/run")
        #expect(r.stdout.utf8.count <= 64 << 10 && r.stdout.hasSuffix("xxEND\n"), "\(r.stdout.suffix(20))")
        #expect(Self.fileSize(s.path + "/run.stdout") == 16 << 20)
        #expect(r.stdoutBytes == 17825792 + 4 && r.stderr == "oops\n" && r.stderrBytes == 5)
        #expect(r.truncationNotes == ["stdout truncated at 16777216 bytes (of 17825796)"], "\(r.truncationNotes)")
        // FNV-1a 128 of "oops\n", from its definition (offset basis, prime 2^88 + 0x13b).
        var h: (UInt64, UInt64) = (0x6c62272e07bb0142, 0x62b821756295c58d)
        for b in "oops\n".utf8 {
            h.1 ^= UInt64(b)
            let low = h.1.multipliedFullWidth(by: 0x13b)
            h = (h.0 &* 0x13b &+ low.high &+ (h.1 << 24), low.low)
        }
        #expect(r.stderrDigest == String(format: "%016llx%016llx", h.0, h.1), "\(r.stderrDigest)")
        // Whole outputs decide: the same tail, another size, is not the same output.
        var other = r
        other.stdoutBytes += 1
        #expect(!other.sameStdout(as: r) && r.sameStdout(as: r))
    }

    /// A campaign on a program printing 17 MiB: the files in OUT/work hold at most the cap,
    /// the JSON says so, and a fault that changes only the last word after the cap is
    /// `handled`, one that changes nothing `absorbed`.
    @Test func outputsPastTheCapAreStillComparedWhole() throws {
        let s = try Scratch()
        let bin = try Fixture.build("explore_big_output")
        let (r, report) = try explore(["--function", "malloc", "--strategy", "sites", "-j", "1"], [bin], in: s)
        #expect(r.status == 0, "\(r)")
        let baseline = report?["baseline"]
        #expect(ReportJSON.int(baseline, "stdoutBytes") == 17825792 + 4)
        #expect(ReportJSON.int(baseline, "truncatedAt") == 16 << 20)
        #expect(r.stdout.contains("baseline: stdout truncated at 16777216 bytes (of 17825796) in its file"), "\(r.stdout)")
        #expect(Self.fileSize(s.path + "/out/work/baseline-0.stdout") == 16 << 20)
        let mine = ReportJSON.array(report, "runs").filter { ReportJSON.str($0, "site")?.hasPrefix((bin as NSString).lastPathComponent + "+") == true }
        let outcomes = mine.map { ReportJSON.str($0, "outcome") ?? "" }.sorted()
        #expect(outcomes == ["absorbed", "handled"], "\(r.stdout)")
    }

    // MARK: - survivors

    /// Processes of this test's marker still running (their command line holds it).
    static func processes(holding marker: String) -> [pid_t] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { pid_t($0) }.filter { pid in
            guard let line = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return false }
            return String(decoding: line, as: UTF8.self).contains(marker)
        }
    }

    /// A fault that makes the program leave a setsid daemon ignoring SIGTERM: after the
    /// campaign none is running, and the report names what the run left.
    @Test func whatARunLeavesRunningIsKilledAndNamed() throws {
        let s = try Scratch()
        let bin = try Fixture.build("explore_daemon")
        let marker = "aspects-daemon-\(UUID().uuidString)"
        defer { for pid in Self.processes(holding: marker) { kill(pid, SIGKILL) } }
        let (r, report) = try explore(["--function", "malloc", "--strategy", "sites", "-j", "1"], [bin, marker], in: s)
        #expect(r.status == 0, "\(r)")
        #expect(Self.processes(holding: marker).isEmpty, "daemons left: \(Self.processes(holding: marker))")
        let faulted = ReportJSON.array(report, "runs").filter { ReportJSON.str($0, "site")?.hasPrefix("explore_daemon") == true }
        // it says "out of memory" and exits 1: fail-fast, by design
        #expect(faulted.count == 1 && ReportJSON.str(faulted.first, "outcome") == "fail-fast", "\(r.stdout)")
        let names = ReportJSON.array(faulted.first?["run"], "survivors").compactMap { n -> String? in
            if case .string(let t) = n.value { return t }
            return nil
        }
        // /proc's comm: the program's file name, cut at 15 bytes
        #expect(names.count == 1 && names.allSatisfy { $0.hasPrefix("explore_daemon") }, "\(r.stdout)")
        let baselineSurvivors = ReportJSON.array(report?["baseline"], "survivors")
        #expect(baselineSurvivors.isEmpty)
        #expect(r.stdout.contains("left running (beyond the baseline's), killed after the run:"), "\(r.stdout)")
        #expect(r.stdout.contains("(fail-fast): left 1 process(es) running: explore_daemon"), "\(r.stdout)")
    }

    // MARK: - --keep-work

    /// By default a passing run's directory and output go; with --keep-work they stay.
    @Test func keepWorkKeepsEveryRunsDirectory() throws {
        let s = try Scratch()
        let bin = try Fixture.build("explore_daemon")
        let (r, _) = try explore(["--function", "malloc", "--strategy", "sites", "-j", "1", "--keep-work"], [bin, "keep"], in: s)
        #expect(r.status == 0, "\(r)")
        let work = (try? FileManager.default.contentsOfDirectory(atPath: s.path + "/out/work")) ?? []
        #expect(work.contains("run-00000") && work.contains("run-00000.stdout"), "\(work.sorted())")
        #expect(!work.contains { $0.hasSuffix(".table") }, "\(work.sorted())")
        let s2 = try Scratch()
        let (r2, _) = try explore(["--function", "malloc", "--strategy", "sites", "-j", "1"], [bin, "nokeep"], in: s2)
        #expect(r2.status == 0, "\(r2)")
        let work2 = (try? FileManager.default.contentsOfDirectory(atPath: s2.path + "/out/work")) ?? []
        #expect(!work2.contains("run-00000"), "\(work2.sorted())")
    }
}
