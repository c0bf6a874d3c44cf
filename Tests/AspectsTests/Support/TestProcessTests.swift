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
}
