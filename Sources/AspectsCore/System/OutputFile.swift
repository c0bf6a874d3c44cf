#if canImport(Glibc)
import Glibc
#endif
import CAspectsABI

/// Every file aspectctl writes by name (`run --report-file`, `--report-json`, `explore --json`, `--junit`,
/// `--html`, `--out`'s journal and reproducers) is opened here, and only here. A new file is
/// created; an existing regular file, or a symbolic link to one, is written in place, so the
/// link stays a link. Nothing else is ever opened or replaced: a device, FIFO, socket or
/// directory at the path (or at the end of a link) is refused, since writing there could
/// block, or reach a device, and replacing it by rename would destroy it (issue 20:
/// `--report-json /dev/full` run as root replaced the machine's /dev/full).
///
/// A final symbolic link is followed only when it is the caller's or root's — the kernel's
/// `protected_symlinks` rule, applied everywhere, not only in sticky world-writable
/// directories: a link someone else planted (in /tmp, or a group-writable directory) could
/// aim a root's run at any file root can write (issue 30). The link is read from the very
/// inode checked (O_PATH | O_NOFOLLOW, readlinkat), and its target looked up from the link's
/// own directory, one link at a time, so a link swapped in after the check is never followed.
package enum OutputFile {
    /// Where an output goes once its final links are resolved: the directory that holds it
    /// (O_PATH), its name there, and what is there now (nil: nothing yet).
    struct Place {
        let dir: Int32
        let name: String
        let existing: stat?
        /// The directory's path as given, to check it is writable (nil when reached by a link).
        let dirShown: String?
        func close() { _ = Glibc.close(dir) }
    }

    /// Writes `text` to `path` as the whole file; `option` names the output in errors. With
    /// `mode` (a script's 0755), the file gets exactly that mode, whatever the umask and
    /// whether it was there before. Space for the whole text is reserved before a byte is
    /// written (posix_fallocate): on a full file system (or quota, or file size limit) an
    /// existing file is left as it was and a new one removed, and the error says so, where
    /// truncating first left a cut file that looked like a report (issue 30).
    package static func write(_ text: String, to path: String, option: String, mode: mode_t? = nil) throws(AspectsError) {
        let bytes = Array(text.utf8)
        let (fd, place) = try openPlace(path, option: option, mode: mode ?? 0o644, truncate: false)
        defer { place.close() }
        let created = place.existing == nil
        /// Undoes what it can after a failure: a file we created is removed (if its name
        /// still names it); an existing one is left as it is. The words say which.
        func failed(_ e: Int32, reserved: Bool) -> AspectsError {
            var fate = reserved ? "\(path) is incomplete now: write it again" : "nothing was written: \(path) is as it was"
            if created {
                var opened = stat(), there = stat()
                if fstat(fd, &opened) == 0, fstatat(place.dir, place.name, &there, AT_SYMLINK_NOFOLLOW) == 0,
                   opened.st_dev == there.st_dev, opened.st_ino == there.st_ino, unlinkat(place.dir, place.name, 0) == 0 {
                    fate = "the partial file was removed"
                }
            }
            _ = Glibc.close(fd)
            var error = writeFailure(path, option: option, errno: e)
            error.message += " (\(fate))"
            return error
        }
        if let mode, fchmod(fd, mode) != 0 { throw failed(errno, reserved: false) }
        if !bytes.isEmpty {
            let r = posix_fallocate(fd, 0, off_t(bytes.count))
            // a file system without fallocate (EOPNOTSUPP is emulated by glibc; EINVAL, ENODEV)
            // is written without a reservation
            if r == ENOSPC || r == EDQUOT || r == EFBIG || r == EIO { throw failed(r, reserved: false) }
        }
        if let e = writeAll(fd, bytes, at: 0) { throw failed(e, reserved: true) }
        if ftruncate(fd, off_t(bytes.count)) != 0 { throw failed(errno, reserved: true) }
        if Glibc.close(fd) != 0 { throw writeFailure(path, option: option, errno: errno) }
    }

    /// Opens `path` for writing as a new (with `mode`, less the umask) or truncated regular
    /// file, close-on-exec: for outputs written as they come (a report, a journal).
    package static func open(_ path: String, option: String, mode: mode_t = 0o644) throws(AspectsError) -> Int32 {
        let (fd, place) = try openPlace(path, option: option, mode: mode, truncate: true)
        place.close()
        return fd
    }

    /// The descriptor of the output (created, or the existing regular file, truncated when
    /// asked) and its place.
    static func openPlace(_ path: String, option: String, mode: mode_t, truncate: Bool) throws(AspectsError) -> (Int32, Place) {
        // Twice at most: a file that appears between the look and the create is looked at again.
        for _ in 0..<2 {
            let place = try locate(path, option: option)
            guard let existing = place.existing else {
                let fd = openat(place.dir, place.name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
                if fd >= 0 { return (fd, place) }
                let e = errno
                place.close()
                if e == EEXIST { continue }
                throw openFailure(path, option: option, errno: e)
            }
            guard isRegular(existing) else { place.close(); throw notRegular(path, option: option) }
            // O_NONBLOCK keeps a FIFO swapped in after the look from blocking the open, and
            // the descriptor must be the very file looked at.
            let fd = openat(place.dir, place.name, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
            guard fd >= 0 else { let e = errno; place.close(); throw openFailure(path, option: option, errno: e) }
            var opened = stat()
            guard fstat(fd, &opened) == 0, isRegular(opened), opened.st_dev == existing.st_dev, opened.st_ino == existing.st_ino else {
                _ = Glibc.close(fd)
                place.close()
                throw notRegular(path, option: option)
            }
            if truncate, ftruncate(fd, 0) != 0 {
                let e = errno
                _ = Glibc.close(fd)
                place.close()
                throw openFailure(path, option: option, errno: e)
            }
            return (fd, place)
        }
        throw openFailure(path, option: option, errno: EEXIST)
    }

    /// Resolves the final symbolic links of `path` under the link rule (the type's comment):
    /// the place the output goes, or why not.
    static func locate(_ path: String, option: String) throws(AspectsError) -> Place {
        guard !path.isEmpty, !path.hasSuffix("/") else { throw notRegular(path, option: option) }
        var current = path
        var base = AT_FDCWD
        var viaLink = false
        defer { if base != AT_FDCWD { _ = Glibc.close(base) } }
        for _ in 0..<40 {
            let slash = current.lastIndex(of: "/")
            let dirPart = slash.map { current[..<$0].isEmpty ? "/" : String(current[..<$0]) } ?? "."
            let name = slash.map { String(current[current.index(after: $0)...]) } ?? current
            guard !name.isEmpty else { throw notRegular(path, option: option) }
            // the directories on the way are followed as the kernel follows them
            let dir = openat(base, dirPart, 0o10000000 /* O_PATH */ | O_DIRECTORY | O_CLOEXEC)
            guard dir >= 0 else { throw openFailure(path, option: option, errno: errno) }
            let fd = openat(dir, name, 0o10000000 /* O_PATH */ | O_NOFOLLOW | O_CLOEXEC)
            if fd < 0 {
                let e = errno
                // a link to nothing is refused, as ever: it is not the caller's file to create
                guard e == ENOENT, !viaLink else { _ = Glibc.close(dir); throw viaLink ? notRegular(path, option: option) : openFailure(path, option: option, errno: e) }
                return Place(dir: dir, name: name, existing: nil, dirShown: dirPart)
            }
            var st = stat()
            guard fstat(fd, &st) == 0 else { let e = errno; _ = Glibc.close(fd); _ = Glibc.close(dir); throw openFailure(path, option: option, errno: e) }
            guard (st.st_mode & S_IFMT) == S_IFLNK else {
                _ = Glibc.close(fd)
                return Place(dir: dir, name: name, existing: st, dirShown: viaLink ? nil : dirPart)
            }
            guard st.st_uid == geteuid() || st.st_uid == 0 else {
                _ = Glibc.close(fd)
                _ = Glibc.close(dir)
                throw foreignLink(path, option: option, link: current == path ? path : "\(current) (reached from \(path))", owner: st.st_uid)
            }
            var buf = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let n = readlinkat(fd, "", &buf, Int(PATH_MAX))
            _ = Glibc.close(fd)
            guard n > 0 else { let e = errno; _ = Glibc.close(dir); throw openFailure(path, option: option, errno: n == 0 ? ENOENT : e) }
            current = String(decoding: buf.prefix(n).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            // a relative target is looked up from the link's own directory
            if base != AT_FDCWD { _ = Glibc.close(base) }
            base = dir
            viaLink = true
            guard !current.hasSuffix("/") else { throw notRegular(path, option: option) }
        }
        throw openFailure(path, option: option, errno: ELOOP)
    }

    /// Says before any work whether `path` could be written later: a regular file (through a
    /// link to one the rule allows), or nothing yet in a directory we can write. A run must not
    /// find after its command, nor a campaign of minutes at its end, that its report has
    /// nowhere to go. (`open` and `write` check again when they write.)
    package static func check(_ path: String, option: String) throws(AspectsError) {
        let place = try locate(path, option: option)
        defer { place.close() }
        guard let existing = place.existing else {
            if let dir = place.dirShown, access(dir, W_OK) != 0 { throw openFailure(path, option: option, errno: errno) }
            return
        }
        guard isRegular(existing) else { throw notRegular(path, option: option) }
        guard faccessat(place.dir, place.name, W_OK, 0) == 0 else { throw openFailure(path, option: option, errno: errno) }
    }

    /// Says before any work whether `path` may be an output directory (explore's `--out`): a
    /// final symbolic link there must be the caller's or root's, as for files. Nothing is made.
    package static func checkDirectory(_ path: String, option: String) throws(AspectsError) {
        var st = stat()
        let trimmed = path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
        guard lstat(trimmed, &st) == 0, (st.st_mode & S_IFMT) == S_IFLNK else { return }
        guard st.st_uid == geteuid() || st.st_uid == 0 else { throw foreignLink(path, option: option, link: trimmed, owner: st.st_uid) }
    }

    /// Writes all of `bytes` to `fd` (short writes continued, EINTR retried): nil, or the errno
    /// of the write that failed. The one write loop of every output aspectctl makes.
    package static func writeAll(_ fd: Int32, _ bytes: [UInt8], at offset: off_t? = nil) -> Int32? {
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { b in
                offset.map { pwrite(fd, b.baseAddress! + done, b.count - done, $0 + off_t(done)) } ?? Glibc.write(fd, b.baseAddress! + done, b.count - done)
            }
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

    static func foreignLink(_ path: String, option: String, link: String, owner: uid_t) -> AspectsError {
        var buf = [CChar](repeating: 0, count: 256)
        let who = aspects_user_name(owner, &buf, UInt32(buf.count)) != 0 ? "user \(String(cString: buf)) (uid \(owner))" : "uid \(owner)"
        return AspectsError(.output, field: option, "\(link) is a symbolic link of \(who), neither yours nor root's, so it is not followed (anyone who can plant a link could aim it at a file of yours); \(path) is left alone",
                            fix: "give the real path of the file (`realpath`), or a path in a directory only you can write")
    }

    static func openFailure(_ path: String, option: String, errno e: Int32) -> AspectsError {
        AspectsError(.output, field: option, "cannot open \(path) for writing: \(System.errnoText(e))",
                     fix: "give a path in a directory you can write")
    }

    package static func writeFailure(_ path: String, option: String, errno e: Int32) -> AspectsError {
        AspectsError(.output, field: option, "cannot write \(path): \(System.errnoText(e))",
                     fix: e == ENOSPC || e == EDQUOT ? "free space on its file system, or write elsewhere" : "write it elsewhere")
    }
}
