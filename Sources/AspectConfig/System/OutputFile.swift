#if canImport(Glibc)
import Glibc
#endif

/// Every file aspectctl writes by name (`run --report-file`, `--report-json`, `explore --json`, `--junit`,
/// `--html`, its reproducers) is written through its path: a new file is created; an existing
/// regular file, or a symbolic link to one, is truncated and written in place, so the link
/// stays a link. Nothing else is ever opened or replaced: a device, FIFO, socket or directory
/// at the path (or at the end of a link) is refused, since writing there could block, or reach
/// a device, and replacing it by rename would destroy it (issue 20: `--report-json /dev/full`
/// run as root replaced the machine's /dev/full).
public enum OutputFile {
    /// Writes `text` to `path` as the whole file; `option` names the output in errors. With
    /// `mode` (a script's 0755), the file gets exactly that mode, whatever the umask and
    /// whether it was there before.
    public static func write(_ text: String, to path: String, option: String, mode: mode_t? = nil) throws(AspectsError) {
        let fd = try open(path, option: option, mode: mode ?? 0o644)
        if let mode, fchmod(fd, mode) != 0 {
            let e = errno
            _ = Glibc.close(fd)
            throw writeFailure(path, option: option, errno: e)
        }
        let failed = writeAll(fd, Array(text.utf8))
        let closed = Glibc.close(fd) == 0 ? nil : errno
        if let e = failed ?? closed { throw writeFailure(path, option: option, errno: e) }
    }

    /// Opens `path` for writing as a new (with `mode`, less the umask) or truncated regular
    /// file, close-on-exec.
    public static func open(_ path: String, option: String, mode: mode_t = 0o644) throws(AspectsError) -> Int32 {
        // Twice at most: a file that appears between the look and the create is looked at again.
        for _ in 0..<2 {
            var st = stat()
            if lstat(path, &st) != 0 {
                guard errno == ENOENT else { throw openFailure(path, option: option, errno: errno) }
                let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
                if fd >= 0 { return fd }
                if errno == EEXIST { continue }
                throw openFailure(path, option: option, errno: errno)
            }
            // What the path leads to must be a regular file; O_NONBLOCK keeps a FIFO swapped in
            // after the look from blocking the open, and the descriptor is checked again.
            var target = stat()
            guard stat(path, &target) == 0, isRegular(target) else { throw notRegular(path, option: option) }
            let fd = Glibc.open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
            guard fd >= 0 else { throw openFailure(path, option: option, errno: errno) }
            var opened = stat()
            guard fstat(fd, &opened) == 0, isRegular(opened) else {
                _ = Glibc.close(fd)
                throw notRegular(path, option: option)
            }
            guard ftruncate(fd, 0) == 0 else {
                let e = errno
                _ = Glibc.close(fd)
                throw openFailure(path, option: option, errno: e)
            }
            return fd
        }
        throw openFailure(path, option: option, errno: EEXIST)
    }

    /// Says before any work whether `path` could be written later: a regular file (through a
    /// link to one), or nothing yet in a directory we can write. A campaign of minutes must not
    /// find at its end that its report has nowhere to go. (`open` checks again when it writes.)
    public static func check(_ path: String, option: String) throws(AspectsError) {
        var st = stat()
        if lstat(path, &st) != 0 {
            guard errno == ENOENT else { throw openFailure(path, option: option, errno: errno) }
            let dir = path.contains("/") ? String(path[..<path.lastIndex(of: "/")!]) : "."
            guard access(dir.isEmpty ? "/" : dir, W_OK) == 0 else { throw openFailure(path, option: option, errno: errno) }
            return
        }
        var target = stat()
        guard stat(path, &target) == 0, isRegular(target) else { throw notRegular(path, option: option) }
        guard access(path, W_OK) == 0 else { throw openFailure(path, option: option, errno: errno) }
    }

    /// Writes all of `bytes` to `fd` (short writes continued, EINTR retried): nil, or the errno
    /// of the write that failed. The one write loop of every output aspectctl makes.
    public static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Int32? {
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + done, $0.count - done) }
            if n > 0 { done += n; continue }
            if n < 0 && errno == EINTR { continue }
            return n < 0 ? errno : EIO
        }
        return nil
    }

    static func isRegular(_ st: stat) -> Bool { (st.st_mode & S_IFMT) == S_IFREG }

    static func notRegular(_ path: String, option: String) -> AspectsError {
        AspectsError(.output, field: option, "\(path) is not a regular file (a device, FIFO, socket, directory, or a symbolic link to one or to nothing); it is left alone",
                     fix: "give the path of a regular file, or of one to create")
    }

    static func openFailure(_ path: String, option: String, errno e: Int32) -> AspectsError {
        AspectsError(.output, field: option, "cannot open \(path) for writing: \(System.errnoText(e))",
                     fix: "give a path in a directory you can write")
    }

    public static func writeFailure(_ path: String, option: String, errno e: Int32) -> AspectsError {
        AspectsError(.output, field: option, "cannot write \(path): \(System.errnoText(e))",
                     fix: e == ENOSPC || e == EDQUOT ? "free space on its file system, or write elsewhere" : "write it elsewhere")
    }
}
