import AspectsCore
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// aspectctl's standard streams. Descriptors 0–2 are always open (a closed one would be
/// taken by the next file opened — a private table opened as fd 2 received the messages in
/// its header); SIGPIPE is ignored, so that a reader gone away is a write error and not a
/// death that leaves a private table behind; and a standard output that could not be written
/// (a full disk under `list --rules > saved.json`, /dev/full, a closed pipe) makes the exit
/// status 74 (EX_IOERR), whatever the command did.
enum Console {
    /// Called first in main.
    static func prepare() {
        for fd: Int32 in 0...2 where fcntl(fd, F_GETFD) == -1 && errno == EBADF {
            // open takes the lowest free descriptor: this very one
            let opened = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY)
            if opened >= 0 && opened != fd { _ = dup2(opened, fd); _ = close(opened) }
        }
        signal(SIGPIPE, SIG_IGN)
        atexit { Console.checkStandardOutput() }
    }

    /// A message on stderr. One that cannot be written is lost: there is nowhere left to say so,
    /// and the work it reports on is done (an `add` has committed its whole batch by then).
    static func write(_ text: String) {
        _ = OutputFile.writeAll(2, Array(text.utf8))
    }

    /// Flushes standard output: everything printed reached it, or aspectctl exits 74 now. At
    /// exit, and between the rounds of `events --follow`.
    static func checkStandardOutput() {
        // Swift's print writes into C's stdout stream; at exit nothing else uses it.
        let flushed = fflush(stdout) == 0
        let e = errno
        guard !flushed || ferror(stdout) != 0 else { return }
        write("aspectctl: error: cannot write standard output: \(flushed ? "an earlier write failed" : String(cString: strerror(e)))\n")
        _exit(74)
    }
}
