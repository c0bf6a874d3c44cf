import Foundation
import Testing

/// The tests' runner of programs: a run past its limit fails its test by name and limit, and
/// what it started dies with it (else the background sleep here would hold the pipes for 30 s).
@Suite struct TestProcessTests {
    @Test func aRunPastItsLimitIsKilledWithItsDescendantsAndSaysSo() {
        let started = Date()
        do {
            _ = try Proc.run("/bin/sh", ["-c", "sleep 30 & sleep 30"], timeout: 0.5)
            Issue.record("a run of 30 s ended within its limit of 0.5 s")
        } catch {
            #expect("\(error)".hasPrefix("timed out: /bin/sh -c sleep 30 & sleep 30 ran past its limit of 0.5 s"), "\(error)")
        }
        #expect(Date().timeIntervalSince(started) < 10)
    }

    @Test func statusOutputsInputDirectoryAndEnvironmentAreThoseOfTheProgram() throws {
        let r = try Proc.run("/bin/sh", ["-c", "read line; echo \"$line $PWD $X ${LD_PRELOAD-none}\"; echo err >&2; kill -TERM $$"],
                             environment: ["X": "x"], stdin: "in\n", directory: "/tmp")
        #expect(r.status == 128 + SIGTERM && r.stdout == "in /tmp x none\n" && r.stderr == "err\n", "\(r)")
    }

    /// A started program (TestProcess.start) is under the same limit: past it, it and what it
    /// started are killed, and waiting for it records the timeout as an issue of the test.
    @Test func aStartedProgramPastItsLimitIsKilledWithItsDescendantsAndSaysSo() throws {
        let started = Date()
        let out = Pipe()
        let p = try TestProcess.start("/bin/sh", ["-c", "sleep 30 & echo $!; sleep 30"], stdout: out, timeout: 0.3)
        var line = Data()
        while !line.contains(10) {
            let d = out.fileHandleForReading.readData(ofLength: 1)
            if d.isEmpty { break }
            line += d
        }
        let background = try #require(pid_t(String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)))
        withKnownIssue("a started program past its limit") {
            #expect(p.wait() == 128 + SIGKILL)
        } matching: { issue in
            issue.comments.contains {
                $0.rawValue.hasPrefix("timed out: /bin/sh -c sleep 30 & echo $!; sleep 30 ran past its limit of 0.3 s")
            }
        }
        let stat = (try? String(contentsOfFile: "/proc/\(background)/stat", encoding: .utf8)) ?? ""
        #expect(stat.isEmpty || stat.contains(") Z"), "its background sleep still runs: \(stat)")
        #expect(Date().timeIntervalSince(started) < 5)
    }
}
