import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
import AspectsCore

/// Subprocess: how aspectctl and the test libraries run a program to its end (ld.so --list,
/// addr2line, readelf, the program under test of `Aspects.run`).
@Suite struct SubprocessTests {
    @Test func bothOutputsAreReadWhateverTheirSize() throws {
        // 1 MiB on each stream, stderr first: a reader of one pipe at a time would block
        let r = try Subprocess.run("/bin/sh", ["-c", "head -c 1048576 /dev/zero >&2; head -c 1048576 /dev/zero; exit 3"])
        #expect(r.status == 3 && r.stdout.count == 1 << 20 && r.stderr.count == 1 << 20)
    }

    @Test func aSignalIsTheShellsStatus() throws {
        let r = try Subprocess.run("/bin/sh", ["-c", "kill -USR1 $$"])
        #expect(r.status == 128 + SIGUSR1, "\(r.status)")
    }

    @Test(.tags(.realPrograms)) func inputReachesTheProgram() throws {
        let r = try Subprocess.run("/bin/cat", [], input: Data("hello\n".utf8))
        #expect(r.status == 0 && String(decoding: r.stdout, as: UTF8.self) == "hello\n")
    }

    /// 8 MiB for a program that never reads: the write fails with EPIPE once it has ended,
    /// and this process (a test runner here) lives on.
    @Test func inputTheProgramDoesNotReadIsNoSIGPIPE() throws {
        let r = try Subprocess.run("/bin/true", [], input: Data(count: 8 << 20))
        #expect(r.status == 0)
    }

    /// The child has only 0, 1 and 2: a descriptor we opened without close-on-exec stays here.
    @Test func theChildInheritsNoOtherDescriptor() throws {
        let fd = open("/dev/null", O_RDONLY) // no O_CLOEXEC, on purpose
        defer { close(fd) }
        #expect(fd > 2)
        let r = try Subprocess.run("/bin/sh", ["-c", "ls /proc/self/fd"])
        // the shell's own: 0, 1, 2, and the one ls reads /proc/self/fd through
        let fds = String(decoding: r.stdout, as: UTF8.self).split(separator: "\n").compactMap { Int32($0) }
        #expect(!fds.contains(fd) && fds.filter { $0 > 2 }.count <= 1, "\(fds)")
    }

    /// Whatever this thread blocks, the child starts with nothing blocked.
    @Test func theChildStartsWithNoSignalBlocked() throws {
        var all = sigset_t(), old = sigset_t()
        sigfillset(&all)
        pthread_sigmask(SIG_BLOCK, &all, &old)
        defer { pthread_sigmask(SIG_SETMASK, &old, nil) }
        let r = try Subprocess.run("/bin/sh", ["-c", "grep SigBlk /proc/self/status"])
        #expect(String(decoding: r.stdout, as: UTF8.self).contains("0000000000000000"), "\(String(decoding: r.stdout, as: UTF8.self))")
    }
}
