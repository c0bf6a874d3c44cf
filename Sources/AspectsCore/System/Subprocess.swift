#if canImport(Glibc)
import Glibc
#endif
import Foundation
import CAspectsABI

/// A program run to its end with its output captured: posix_spawn, one poll loop over the
/// pipes, a blocking waitpid. Foundation's Process is not used: its waitUntilExit waits for the
/// child in 50 ms steps of a run loop, which made each `ld.so --list` of `aspectctl run` cost
/// 50 ms, and every aspectctl a test library starts as much again.
package enum Subprocess {
    package struct Result: Sendable {
        /// The exit status, or 128+N when signal N ended it (as a shell says it).
        package var status: Int32
        package var stdout: Data
        package var stderr: Data
    }

    /// Runs `executable` (a path) with `arguments`, `input` on its stdin (else /dev/null), in
    /// `environment` (nil: ours), with no signal blocked and every signal's action the
    /// default, whatever our own threads block or handle. Both outputs are read as they come,
    /// so a chatty program never blocks on a full pipe.
    package static func run(_ executable: String, _ arguments: [String], environment: [String: String]? = nil,
                           input: Data? = nil) throws(AspectsError) -> Result {
        var outPipe: [Int32] = [-1, -1], errPipe: [Int32] = [-1, -1], inPipe: [Int32] = [-1, -1]
        defer { for fd in outPipe + errPipe + inPipe where fd >= 0 { close(fd) } }
        guard aspects_pipe_cloexec(&outPipe) == 0, aspects_pipe_cloexec(&errPipe) == 0,
              input == nil || aspects_pipe_cloexec(&inPipe) == 0 else {
            throw System.failure("pipe2", "for \(executable)")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // dup2 onto 0, 1, 2 clears close-on-exec there; every pipe end itself is closed by exec
        if input != nil { posix_spawn_file_actions_adddup2(&actions, inPipe[0], 0) }
        else { posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0) }
        posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, errPipe[1], 2)
        aspects_spawn_close_from(&actions, 3)
        var attrs = posix_spawnattr_t()
        posix_spawnattr_init(&attrs)
        defer { posix_spawnattr_destroy(&attrs) }
        cleanSignals(&attrs)
        let cArgs = cStrings([executable] + arguments), cEnv = cStrings(environment ?? ProcessInfo.processInfo.environment)
        defer { cArgs.forEach { free($0) }; cEnv.forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, executable, &actions, &attrs, cArgs, cEnv)
        guard rc == 0 else { throw System.failure("posix_spawn", executable, rc) }
        // our copies of the child's ends go, so that its exit is our end of file
        for fd in [outPipe[1], errPipe[1], inPipe[0]] where fd >= 0 { close(fd) }
        (outPipe[1], errPipe[1], inPipe[0]) = (-1, -1, -1)
        var result = Result(status: 0, stdout: Data(), stderr: Data())
        try pump(input: input ?? Data(), to: &inPipe[1], out: &outPipe[0], err: &errPipe[0], into: &result)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 {
            guard errno == EINTR else { throw System.failure("waitpid", executable) }
        }
        let signal = status & 0x7f
        result.status = signal == 0 ? (status >> 8) & 0xff : 128 + signal
        return result
    }

    /// A child of ours starts with no signal blocked and every signal's action the default,
    /// whatever our threads block or handle (a test runner blocks many); `flags` adds others
    /// (POSIX_SPAWN_SETPGROUP). `aspectctl run` does not use it for its command, which keeps what aspectctl's own
    /// parent set (a nohup's ignored SIGHUP), and gets back only what aspectctl changed.
    package static func cleanSignals(_ attrs: inout posix_spawnattr_t, flags: Int32 = 0) {
        var none = sigset_t(), all = sigset_t()
        sigemptyset(&none)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attrs, &none)
        posix_spawnattr_setsigdefault(&attrs, &all)
        posix_spawnattr_setflags(&attrs, Int16(flags | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
    }

    /// Argument or environment strings as posix_spawn takes them (NULL-terminated); the caller
    /// frees each.
    package static func cStrings(_ words: [String]) -> [UnsafeMutablePointer<CChar>?] { words.map { strdup($0) } + [nil] }

    package static func cStrings(_ environment: [String: String]) -> [UnsafeMutablePointer<CChar>?] {
        cStrings(environment.map { "\($0.key)=\($0.value)" })
    }

    /// Writes `input` and reads both outputs until the child has closed them (one poll loop:
    /// a child that writes before it reads cannot deadlock us). Each descriptor is closed and
    /// set to -1 once done.
    private static func pump(input: Data, to inFD: inout Int32, out: inout Int32, err: inout Int32,
                             into result: inout Result) throws(AspectsError) {
        var written = 0
        if inFD >= 0 && input.isEmpty { close(inFD); inFD = -1 }
        if inFD >= 0 { _ = fcntl(inFD, F_SETFL, fcntl(inFD, F_GETFL) | O_NONBLOCK) }
        var buffer = [UInt8](repeating: 0, count: 65536)
        while out >= 0 || err >= 0 || inFD >= 0 {
            var fds = [pollfd(fd: out, events: Int16(POLLIN), revents: 0), pollfd(fd: err, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: inFD, events: Int16(POLLOUT), revents: 0)]
            if poll(&fds, nfds_t(fds.count), -1) == -1 {
                if errno == EINTR { continue }
                throw System.failure("poll", "the output of a child")
            }
            if fds[2].revents != 0 {
                let fd = inFD
                let n = withoutSIGPIPE { input.withUnsafeBytes { raw in write(fd, raw.baseAddress! + written, raw.count - written) } }
                if n > 0 { written += n }
                if (n < 0 && errno != EAGAIN && errno != EINTR) || written == input.count || fds[2].revents & Int16(POLLERR) != 0 {
                    close(inFD)
                    inFD = -1
                }
            }
            for (i, fd) in [(0, out), (1, err)] where fd >= 0 && fds[i].revents != 0 {
                let n = read(fd, &buffer, buffer.count)
                if n > 0 {
                    if i == 0 { result.stdout.append(contentsOf: buffer[0..<n]) } else { result.stderr.append(contentsOf: buffer[0..<n]) }
                } else if n == 0 || (errno != EINTR && errno != EAGAIN) {
                    close(fd)
                    if i == 0 { out = -1 } else { err = -1 }
                }
            }
        }
    }

    /// Runs `body` (a write to a pipe the child may have closed) with SIGPIPE blocked in this
    /// thread, and takes back a SIGPIPE it raised: EPIPE is the answer, not the death of the
    /// process that asked (a test runner, say).
    private static func withoutSIGPIPE(_ body: () -> Int) -> Int {
        var pipeSet = sigset_t(), old = sigset_t()
        sigemptyset(&pipeSet)
        sigaddset(&pipeSet, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &pipeSet, &old)
        let n = body()
        let saved = errno
        if n < 0 && saved == EPIPE && sigismember(&old, SIGPIPE) == 0 {
            var zero = timespec(tv_sec: 0, tv_nsec: 0)
            _ = sigtimedwait(&pipeSet, nil, &zero)
        }
        pthread_sigmask(SIG_SETMASK, &old, nil)
        errno = saved
        return n
    }
}
