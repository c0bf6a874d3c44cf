#if canImport(Glibc)
import Glibc
#endif
import CAspectsABI

/// The table's file: opened only under the trust rule the preload applies
/// (aspects_trust.h: a regular file of our own euid, not writable by group or others, reached
/// without symbolic links), created atomically with mode 0600, removed only when it is a table
/// of ours. A table decides what runs inside every process that attaches it, so aspectctl
/// never writes into one the preload would refuse, and never removes a file that is not one.
enum TableFile {
    /// Opens the table file under the trust rule; the error says why not, and what to do.
    static func openTrusted(_ name: TableName, writable: Bool = true) throws(AspectsError) -> Int32 {
        var fd: Int32 = -1
        var owner: UInt32 = 0
        let verdict = aspects_table_open(name.path, writable ? 1 : 0, geteuid(), &fd, &owner)
        let saved = errno
        if verdict == Int32(ASPECTS_TRUST_OK.rawValue) { return fd }
        let path = name.path
        switch UInt32(verdict) {
        case ASPECTS_TRUST_MISSING.rawValue:
            throw AspectsError(.noTable, field: "--table", "there is no table \"\(name)\" (\(path))",
                               fix: "create it with `aspectctl create --table \(name)`, or check --table / $ASPECTS_TABLE")
        case ASPECTS_TRUST_OWNER.rawValue:
            throw AspectsError(.badTable, field: "--table", "table \"\(name)\" (\(path)) belongs to uid \(owner), not to you (uid \(geteuid())); a table is obeyed and written only by its owner",
                               fix: "use a table of your own (`aspectctl create --table NAME`), or work as uid \(owner)")
        case ASPECTS_TRUST_MODE.rawValue:
            throw AspectsError(.badTable, field: "--table", "table \"\(name)\" (\(path)) is writable by group or others, so anyone could inject faults through it; processes ignore it",
                               fix: "check who changed it, then `chmod 600 \(path)`, or destroy and re-create it")
        case ASPECTS_TRUST_SYMLINK.rawValue:
            throw AspectsError(.badTable, field: "--table", "\"\(path)\" is reached through a symbolic link; tables are used only by their real path",
                               fix: "name the table by the path of the file itself (`realpath \(path)`)")
        case ASPECTS_TRUST_NOT_REGULAR.rawValue:
            throw AspectsError(.badTable, field: "--table", "\"\(path)\" is not a regular file, so it is not an aspects table",
                               fix: "name a table made by `aspectctl create`")
        case ASPECTS_TRUST_BAD_PATH.rawValue:
            throw AspectsError(.badTableName, field: "--table", "\"\(path)\" is not a usable table path", fix: "give an absolute path or a plain name")
        default:
            throw AspectsError(.system, field: "--table", "cannot open table \"\(name)\" (\(path)): \(System.errnoText(saved))")
        }
    }

    /// Makes the table file atomically: `fill` writes the whole table into a new private file
    /// (mode 0600 whatever the umask) beside the final name, which is then linked in under
    /// that name — no process ever sees a half-made table there, and an existing name is
    /// never replaced. Returns the descriptor of the finished file.
    static func createAtomically(_ name: TableName, size: Int, fill: (Int32) throws(AspectsError) -> Void) throws(AspectsError) -> Int32 {
        let path = name.path
        let slash = path.lastIndex(of: "/")!
        let dir = String(path[..<slash]).isEmpty ? "/" : String(path[..<slash])
        let base = String(path[path.index(after: slash)...])
        try refuseExisting(name)
        var fd: Int32 = -1
        var temp = ""
        for _ in 0..<16 {
            temp = dir + "/.\(base).new-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
            fd = Glibc.open(temp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            if fd >= 0 || errno != EEXIST { break }
        }
        guard fd >= 0 else {
            let e = errno
            if e == ENOENT { throw AspectsError(.noInput, field: "--table", "the directory \(dir) does not exist", fix: "create it first, or pick another table path") }
            throw System.failure("create", temp, e)
        }
        // Once `fill` has run, the descriptor belongs to what it made (which closes it).
        var filled = false
        do throws(AspectsError) {
            try System.valueOrErrno("fchmod", temp) { fchmod(fd, 0o600) } // the umask may have taken more
            try System.truncate(fd, size, temp)
            try fill(fd)
            filled = true
            if link(temp, path) != 0 {
                let e = errno
                if e == EEXIST { try refuseExisting(name) }
                throw System.failure("link", "\(temp) to \(path)", e)
            }
        } catch {
            _ = Glibc.unlink(temp)
            if !filled { System.close(fd) }
            throw error
        }
        _ = Glibc.unlink(temp)
        return fd
    }

    /// The error for a name that is taken: whose it is, and what it is.
    static func refuseExisting(_ name: TableName) throws(AspectsError) {
        var st = stat()
        guard lstat(name.path, &st) == 0 else { return }
        if st.st_uid != geteuid() {
            throw AspectsError(.tableExists, field: "--table", "\"\(name.path)\" already exists and belongs to uid \(st.st_uid), not to you",
                               fix: "pick another table name")
        }
        if Self.isTable(name) {
            throw AspectsError(.tableExists, field: "--table", "table \"\(name)\" already exists",
                               fix: "use it, pick another name, or `aspectctl destroy --table \(name)` first")
        }
        throw AspectsError(.tableExists, field: "--table", "\"\(name.path)\" already exists and is not an aspects table",
                           fix: "pick another table name (the file is left alone)")
    }

    /// Whether the file carries a table's magic (any ABI version), read without trusting it.
    static func isTable(_ name: TableName) -> Bool {
        let fd = Glibc.open(name.path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { System.close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return false }
        var magic: UInt64 = 0
        return pread(fd, &magic, 8, 0) == 8 && magic == ASPECTS_MAGIC
    }

    /// Removes the table file: only one that opens under the trust rule and carries a table's
    /// magic (of any ABI version: re-creating is the fix for an old one), and only if the name
    /// still names that very file when it is removed.
    static func destroy(_ name: TableName) throws(AspectsError) {
        let fd = try openTrusted(name, writable: false)
        defer { System.close(fd) }
        var magic: UInt64 = 0
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw System.failure("fstat", name.path) }
        guard pread(fd, &magic, 8, 0) == 8, magic == ASPECTS_MAGIC else {
            throw AspectsError(.badTable, field: "--table", "\"\(name.path)\" is not an aspects table (no table magic); it is left alone",
                               fix: "name a table made by `aspectctl create`")
        }
        var now = stat()
        guard fstatat(AT_FDCWD, name.path, &now, AT_SYMLINK_NOFOLLOW) == 0, now.st_dev == st.st_dev, now.st_ino == st.st_ino else {
            throw AspectsError(.badTable, field: "--table", "\"\(name.path)\" was replaced while it was being destroyed; nothing was removed",
                               fix: "check who else works on this table, then try again")
        }
        try System.unlink(name.path)
    }
}
