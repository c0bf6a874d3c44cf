#if canImport(Glibc)
import Glibc
#endif
import CAspectsABI
import AspectsCore

/// The table's file, its anchor: opened only under the trust rule the preload applies
/// (aspects_trust.h: a regular file of our own euid, not writable by group or others, reached
/// without symbolic links, naming a shared memory segment that agrees with it), created
/// atomically with mode 0600, removed only when it is a table of ours. A table decides what
/// runs inside every process that attaches it, so aspectctl never writes into one the preload
/// would refuse, and never removes a file that is not one.
package enum TableFile {
    /// Opens the table under the trust rule: the anchor's descriptor (writers lock it) and the
    /// attached segment. The error says why not, and what to do.
    package static func openTrusted(_ name: TableName, writable: Bool = true) throws(AspectsError) -> (fd: Int32, segment: aspects_table_segment) {
        var fd: Int32 = -1
        var owner: UInt32 = 0
        var segment = aspects_table_segment()
        let verdict = aspects_table_open(name.path, writable ? 1 : 0, geteuid(), &fd, &owner, &segment)
        let saved = errno
        if verdict == Int32(ASPECTS_TRUST_OK.rawValue) { return (fd, segment) }
        throw refusal(name, verdict: verdict, owner: owner, errno: saved)
    }

    /// Why the trust rule refuses the table, in words, and what to do.
    package static func refusal(_ name: TableName, verdict: Int32, owner: UInt32, errno saved: Int32) -> AspectsError {
        let path = name.path
        switch UInt32(verdict) {
        case ASPECTS_TRUST_MISSING.rawValue:
            return AspectsError(.noTable, field: "--table", "there is no table \"\(name)\" (\(path))",
                               fix: "create it with `aspectctl create --table \(name)`, or check --table / $ASPECTS_TABLE")
        case ASPECTS_TRUST_OWNER.rawValue where owner == geteuid():
            // our file, naming a segment of ours given to another user (aspects_segment_verdict)
            return AspectsError(.badTable, field: "--table", "table \"\(name)\" (\(path)) names a shared memory segment that was given to another user, not you (uid \(geteuid())); a table is obeyed and written only by its owner",
                               fix: "check who changed it (`ipcs -m -c`), then `aspectctl destroy --table \(name)` and create it again")
        case ASPECTS_TRUST_OWNER.rawValue:
            return AspectsError(.badTable, field: "--table", "table \"\(name)\" (\(path)) belongs to uid \(owner), not to you (uid \(geteuid())); a table is obeyed and written only by its owner",
                               fix: "use a table of your own (`aspectctl create --table NAME`), or work as uid \(owner)")
        case ASPECTS_TRUST_MODE.rawValue:
            return modeRefusal(name, owner: owner)
        case ASPECTS_TRUST_SYMLINK.rawValue:
            return AspectsError(.badTable, field: "--table", "\"\(path)\" is reached through a symbolic link; tables are used only by their real path",
                               fix: "name the table by the path of the file itself (`realpath \(path)`)")
        case ASPECTS_TRUST_NOT_REGULAR.rawValue:
            return AspectsError(.badTable, field: "--table", "\"\(path)\" is not a regular file, so it is not an aspects table",
                               fix: "name a table made by `aspectctl create`")
        case ASPECTS_TRUST_GROUP.rawValue:
            var st = stat()
            let group = lstat(path, &st) == 0 ? groupText(UInt32(st.st_gid)) : "its group"
            return AspectsError(.badTable, field: "--table", "table \"\(name)\" (\(path)) is shared with group \(group), but its owner, \(userText(owner)), is not a member of that group (by /etc/passwd and /etc/group), so its members could advise processes of a user who never joined them; processes ignore it",
                               fix: owner == geteuid() ? "destroy it and re-create it shared with a group you are a member of (`id -Gn`)"
                                                       : "ask \(userText(owner)) to re-create it shared with a group they are a member of")
        case ASPECTS_TRUST_CREATOR_GROUP.rawValue:
            var st = stat()
            let group = lstat(path, &st) == 0 ? groupText(UInt32(st.st_gid)) : "its group"
            var ds = shmid_ds()
            let creator = anchorShmid(path).flatMap { shmctl($0, IPC_STAT, &ds) == 0 ? groupText(UInt32(ds.shm_perm.cgid)) : nil } ?? "another group"
            return AspectsError(.badTable, field: "--table", "table \"\(name)\" (\(path)) is shared with group \(group), but its shared memory segment was made under group \(creator), and the kernel lets the members of a segment's creator group open it as well as its group's (`ipcs -m -c`), so people outside \(group) could advise its members' processes; processes ignore it",
                               fix: owner == geteuid() ? "`aspectctl destroy --table \(name)`, then create it again: this aspectctl makes a shared table's segment with the sharing group as its creator group"
                                                       : "ask \(userText(owner)) to destroy it and create it again")
        case ASPECTS_TRUST_NOT_ANCHOR.rawValue:
            return AspectsError(.badTable, field: "--table", "\"\(path)\" is not a table of this aspects version (a table's file names the shared memory segment that holds it; tables of aspects before ABI version 10 were files holding the table itself)",
                               fix: "if it is an older table of yours, `aspectctl destroy --table \(name)`, then `aspectctl create --table \(name)`; otherwise name a table made by `aspectctl create`")
        case ASPECTS_TRUST_NO_SEGMENT.rawValue:
            return AspectsError(.badTable, field: "--table", "table \"\(name)\" (\(path)) has lost its shared memory segment (the machine restarted, someone ran ipcrm, or this is another IPC namespace: its id names no segment of the table's now); processes attach nothing",
                               fix: "`aspectctl destroy --table \(name) && aspectctl create --table \(name)`, then add its rules again")
        case ASPECTS_TRUST_BAD_PATH.rawValue:
            return AspectsError(.badTableName, field: "--table", "\"\(path)\" is not a usable table path", fix: "give an absolute path or a plain name")
        default:
            return AspectsError(.system, field: "--table", "cannot open table \"\(name)\" (\(path)): \(System.errnoText(saved))")
        }
    }

    /// A mode mismatch in words: the file's and the segment's modes and groups when they
    /// disagree (a file chmod'ed by hand is not a lost segment: issue 30), and what to do.
    package static func modeRefusal(_ name: TableName, owner: UInt32) -> AspectsError {
        let path = name.path
        let whose = owner == geteuid() ? "check who changed it, then " : "ask \(userText(owner)) to check who changed it, then "
        var st = stat()
        guard lstat(path, &st) == 0, let id = anchorShmid(path), let seg = listedSegment(id) else {
            return AspectsError(.badTable, field: "--table", "table \"\(name)\" (\(path)) is writable by group or others (its file, or the shared memory segment it names: `ipcs -m`), so anyone could inject faults through it; processes ignore it",
                               fix: whose + "`chmod 600 \(path)`, or destroy and re-create it")
        }
        let fileMode = UInt32(st.st_mode) & 0o777, segMode = seg.mode & 0o777
        let writable = (fileMode | segMode) & 0o022 != 0
        let modes = "its file is mode 0\(String(fileMode, radix: 8)) of group \(groupText(UInt32(st.st_gid))), the shared memory segment it names (id \(id), `ipcs -m -i \(id)`) mode 0\(String(segMode, radix: 8)) of group \(groupText(seg.gid))"
        let shared = fileMode == 0o660 || segMode == 0o660
        return AspectsError(.badTable, field: "--table", "table \"\(name)\" (\(path)) \(writable ? "is writable by group or others" : "has a file and a segment whose modes disagree"): \(modes); a table's file and segment are both 0600, or, shared (`create --share-with-group`), both 0660 and of its group, so one of them was changed by hand; processes ignore it",
                           fix: whose + (shared ? "`aspectctl destroy --table \(name)` and create it again (shared or not)" : "`chmod 600 \(path)`, or destroy and re-create it"))
    }

    /// The segment `shmid` as the kernel lists it to anyone (aspects_segments_each).
    package static func listedSegment(_ shmid: Int32) -> aspects_listed_segment? {
        var wanted = aspects_listed_segment()
        wanted.shmid = shmid
        let found = withUnsafeMutablePointer(to: &wanted) { p in
            aspects_segments_each({ seg, ctx in
                let want = ctx!.assumingMemoryBound(to: aspects_listed_segment.self)
                guard let seg, seg.pointee.shmid == want.pointee.shmid else { return 0 }
                want.pointee = seg.pointee
                return 1
            }, p)
        }
        return found == 1 ? wanted : nil
    }

    private static func name(_ buf: [CChar]) -> String {
        String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// "user NAME (uid N)", by /etc/passwd as the preload reads it (aspects_trust.h).
    package static func userText(_ uid: UInt32) -> String {
        var buf = [CChar](repeating: 0, count: 256)
        return aspects_user_name(uid, &buf, UInt32(buf.count)) != 0 ? "user \(name(buf)) (uid \(uid))" : "uid \(uid)"
    }

    /// "NAME (gid N)", by /etc/group as the preload reads it.
    package static func groupText(_ gid: UInt32) -> String {
        var buf = [CChar](repeating: 0, count: 256)
        return aspects_group_name(gid, &buf, UInt32(buf.count)) != 0 ? "\(name(buf)) (gid \(gid))" : "gid \(gid)"
    }

    /// A table is shared only with a group its creator is a member of (the rule the preload
    /// applies to its owner, aspects_user_in_group): otherwise the group's members, whom the
    /// creator never joined, could advise the creator's processes.
    package static func requireMembership(sharing gid: UInt32) throws(AspectsError) {
        let me = geteuid()
        guard aspects_user_in_group(me, gid) != 0 else {
            throw AspectsError(.invalidValue, field: "--share-with-group",
                               "you (\(userText(me))) are not a member of group \(groupText(gid)) by /etc/passwd and /etc/group, and processes obey a shared table only when its owner is a member of its group",
                               fix: "share with a group you are a member of (`id -Gn`), or have an administrator add you to it (`usermod -aG GROUP USER`, then log in again)")
        }
    }

    /// Said by commands that work in a table owned by someone else (a member's view of a
    /// shared table): whose it is. Nil for a table of ours.
    package static func whoseNote(_ name: TableName) -> String? {
        var st = stat()
        guard lstat(name.path, &st) == 0, st.st_uid != geteuid() else { return nil }
        return "table \(name) (\(name.path)) is owned by \(userText(UInt32(st.st_uid))), shared with group \(groupText(UInt32(st.st_gid))): its members' processes that attach it obey it, and it obeys what any member adds"
    }

    /// Makes the table file (its anchor) atomically: `fill` writes it whole into a new private
    /// file (mode 0600 whatever the umask) in the final name's directory, which is then linked
    /// in under that name — no process ever sees a half-made table there, and an existing name
    /// is never replaced. The file is an unnamed O_TMPFILE where the file system has them, so a
    /// writer killed half-way leaves nothing behind; elsewhere a hidden temporary name.
    /// Returns the descriptor of the finished file.
    /// `linking` runs just before the name is linked in (the last step a kill can interrupt).
    package static func createAtomically(_ name: TableName, size: Int, fill: (Int32) throws(AspectsError) -> Void,
                                 linking: () -> Void = {}) throws(AspectsError) -> Int32 {
        let path = name.path
        let slash = path.lastIndex(of: "/")!
        let dir = String(path[..<slash]).isEmpty ? "/" : String(path[..<slash])
        let base = String(path[path.index(after: slash)...])
        try refuseLinkedDirectory(dir, name)
        try refuseExisting(name)
        // O_TMPFILE is __O_TMPFILE | O_DIRECTORY (a GNU macro Swift does not import).
        var fd = Glibc.open(dir, O_RDWR | 0o20000000 | O_DIRECTORY | O_CLOEXEC, 0o600)
        var temp: String? = nil
        if fd < 0 {
            let e = errno
            if e == ENOENT || e == ENOTDIR {
                throw AspectsError(.noInput, field: "--table", "the directory \(dir) does not exist", fix: "create it first, or pick another table path")
            }
            guard e == EOPNOTSUPP || e == EISDIR || e == EINVAL else { throw System.failure("create a table file in", dir, e) }
            // No O_TMPFILE here: a private name beside the final one.
            for _ in 0..<16 {
                temp = dir + "/.\(base).new-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
                fd = Glibc.open(temp!, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
                if fd >= 0 || errno != EEXIST { break }
            }
            guard fd >= 0 else { throw System.failure("create", temp!, errno) }
        }
        let shown = temp ?? "a new file in \(dir)"
        // Once `fill` has run, the descriptor belongs to what it made (which closes it).
        var filled = false
        do throws(AspectsError) {
            try System.valueOrErrno("fchmod", shown) { fchmod(fd, 0o600) } // the umask may have taken more
            try System.truncate(fd, size, shown)
            try fill(fd)
            filled = true
            WriterStop.at("create-linking")
            linking()
            let linked: Int32
            if let temp {
                linked = link(temp, path)
            } else {
                // An O_TMPFILE is linked through its /proc/self/fd name (AT_EMPTY_PATH would
                // need CAP_DAC_READ_SEARCH); linkat never replaces an existing name.
                var r = linkat(AT_FDCWD, "/proc/self/fd/\(fd)", AT_FDCWD, path, AT_SYMLINK_FOLLOW)
                if r != 0 && errno == ENOENT && access("/proc/self/fd", F_OK) != 0 {
                    r = linkat(fd, "", AT_FDCWD, path, 0x1000 /* AT_EMPTY_PATH */) // no /proc: privileged callers only
                }
                linked = r
            }
            if linked != 0 {
                let e = errno
                if e == EEXIST { try refuseExisting(name) }
                throw System.failure("link", "the new table to \(path)", e)
            }
        } catch {
            if let temp { _ = Glibc.unlink(temp) }
            if !filled { System.close(fd) }
            throw error
        }
        if let temp { _ = Glibc.unlink(temp) }
        return fd
    }

    /// A table reached through a symbolic link is one no process obeys (the trust rule), so
    /// none is made there.
    package static func refuseLinkedDirectory(_ dir: String, _ name: TableName) throws(AspectsError) {
        var prefix = ""
        for component in dir.split(separator: "/") {
            prefix += "/" + component
            var st = stat()
            guard lstat(prefix, &st) == 0 else { return } // missing: said when the file is made
            if (st.st_mode & S_IFMT) == S_IFLNK {
                throw AspectsError(.badTable, field: "--table", "\"\(name.path)\" would be reached through the symbolic link \(prefix); processes use only tables reached without one",
                                   fix: "name the table by its real path (`realpath \(dir)`)")
            }
        }
    }

    /// The error for a name that is taken: whose it is, and what it is.
    package static func refuseExisting(_ name: TableName) throws(AspectsError) {
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

    /// Whether the file is a table: an anchor of this format, or a table file of an ABI version
    /// before anchors (notATable), read without trusting it.
    package static func isTable(_ name: TableName) -> Bool {
        let fd = Glibc.open(name.path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { System.close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return false }
        return anchor(fd) != nil || notATable(fd, fileSize: Int(st.st_size)) == nil
    }

    /// The segment id the anchor at `path` names, for messages only (the rule has decided).
    package static func anchorShmid(_ path: String) -> Int32? {
        let fd = Glibc.open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { System.close(fd) }
        return anchor(fd)?.shmid
    }

    /// The anchor in the file, if it is exactly one of this format.
    package static func anchor(_ fd: Int32) -> aspects_table_anchor? {
        var st = stat()
        var a = aspects_table_anchor()
        let size = MemoryLayout<aspects_table_anchor>.size
        guard fstat(fd, &st) == 0, st.st_size == size, pread(fd, &a, size, 0) == size,
              a.magic == ASPECTS_ANCHOR_MAGIC, a.version == ASPECTS_ANCHOR_VERSION else { return nil }
        return a
    }

    /// The anchor of a new table: its segment, size and identity.
    package static func writeAnchor(_ fd: Int32, shmid: Int32, size: Int, identity: (UInt64, UInt64), _ shown: String) throws(AspectsError) {
        var a = aspects_table_anchor()
        a.magic = ASPECTS_ANCHOR_MAGIC
        a.version = ASPECTS_ANCHOR_VERSION
        a.shmid = shmid
        a.size = UInt64(size)
        a.identity = identity
        let n = MemoryLayout<aspects_table_anchor>.size
        guard pwrite(fd, &a, n, 0) == n else { throw System.failure("write", shown, errno) }
    }

    /// Why a file is not a table of any ABI version, or nil: its whole header must be one —
    /// the magic, an ABI version aspects could have written, a header and a total size that fit
    /// the file, and, for this ABI version, exactly the layout its capacities give. The first
    /// 24 bytes (magic, version, header size, total size) are where they are in every version.
    package static func notATable(_ fd: Int32, fileSize: Int) -> String? {
        var h = aspects_table_header()
        let size = MemoryLayout<aspects_table_header>.size
        guard fileSize >= size, pread(fd, &h, size, 0) == size else { return "shorter than a table header" }
        guard h.magic == ASPECTS_MAGIC else { return "no table magic" }
        guard (1..<256).contains(h.abi_version) else { return "its header gives ABI version \(h.abi_version), which no table has" }
        guard h.header_size >= 64, h.header_size <= 4096, h.header_size % 8 == 0,
              h.total_size >= UInt64(h.header_size), h.total_size <= UInt64(fileSize) else {
            return "its header gives a header size of \(h.header_size) and a table size of \(h.total_size) bytes, which do not fit a file of \(fileSize)"
        }
        if h.abi_version == ASPECTS_ABI_VERSION {
            guard h.header_size == UInt32(size),
                  h.total_size == aspects_table_size(h.group_capacity, h.rule_capacity, h.event_capacity, h.stat_capacity) else {
                return "its header's capacities do not give its size"
            }
        }
        return nil
    }

    /// Removes the table: only one of ours (the trust rule and its owner; a table of ours the
    /// preload would refuse may be removed too — group-writable, a segment that disagrees or
    /// is gone, an older ABI version's file: removing it is their fix) that is a table (an
    /// anchor, or notATable's whole header for an older file), and only if the name in its
    /// directory still names that very file. Its segment goes first, if it is still that
    /// table's and ours (aspects_segment_remove_anchored), then the anchor.
    package static func destroy(_ name: TableName) throws(AspectsError) {
        var fd: Int32 = -1
        var owner: UInt32 = 0
        var segment = aspects_table_segment()
        let verdict = aspects_table_open(name.path, 0, geteuid(), &fd, &owner, &segment)
        let saved = errno
        aspects_segment_detach(segment.base)
        let refusedButMaybeOurs: Set<UInt32> = [ASPECTS_TRUST_MODE.rawValue, ASPECTS_TRUST_GROUP.rawValue, ASPECTS_TRUST_OWNER.rawValue,
                                                ASPECTS_TRUST_NOT_ANCHOR.rawValue, ASPECTS_TRUST_NO_SEGMENT.rawValue,
                                                ASPECTS_TRUST_CREATOR_GROUP.rawValue]
        if refusedButMaybeOurs.contains(UInt32(verdict)) {
            // Reached without symbolic links (checked before anything else): opened without
            // following one, never blocking, and ours, or refused as the rule said.
            fd = Glibc.open(name.path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
            var st = stat()
            guard fd >= 0, fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, st.st_uid == geteuid() else {
                if fd >= 0 { System.close(fd) }
                throw refusal(name, verdict: verdict, owner: owner, errno: saved)
            }
        } else if verdict != Int32(ASPECTS_TRUST_OK.rawValue) {
            throw refusal(name, verdict: verdict, owner: owner, errno: saved)
        }
        defer { System.close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw System.failure("fstat", name.path) }
        // A group-shared table opens for its members too; only its owner removes it.
        guard st.st_uid == geteuid() else { throw refusal(name, verdict: Int32(ASPECTS_TRUST_OWNER.rawValue), owner: st.st_uid, errno: 0) }
        if anchor(fd) == nil, let why = notATable(fd, fileSize: Int(st.st_size)) {
            throw AspectsError(.badTable, field: "--table", "\"\(name.path)\" is not an aspects table (\(why)); it is left alone",
                               fix: "name a table made by `aspectctl create`")
        }
        try remove(name, anchor: fd, st)
    }

    /// Removes a table through the anchor its maker holds open (`AdviceTable.destroy()`): the
    /// table a campaign made for one run. The path is not walked again as `destroy(_:)` walks
    /// it — the descriptor is the anchor this process made — and the name is removed only
    /// while it names that very file.
    package static func destroy(_ name: TableName, anchor fd: Int32) throws(AspectsError) {
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw System.failure("fstat", name.path) }
        guard (st.st_mode & S_IFMT) == S_IFREG, st.st_uid == geteuid(), anchor(fd) != nil else {
            throw AspectsError(
                .badTable, field: "--table", "\"\(name.path)\"'s descriptor is no anchor of ours; it is left alone",
                fix: "destroy it by its name (`aspectctl destroy --table \(name)`)")
        }
        try remove(name, anchor: fd, st)
    }

    /// The last steps of a destroy, `fd` the table's anchor (`st` its status): the segment, if
    /// it is still that table's and ours (aspects_segment_remove_anchored), then the name —
    /// looked up and removed in one directory opened without following links, and only if it
    /// still names the anchor.
    static func remove(_ name: TableName, anchor fd: Int32, _ st: stat) throws(AspectsError) {
        let path = name.path
        let slash = path.lastIndex(of: "/")!
        let dirPath = String(path[..<slash]).isEmpty ? "/" : String(path[..<slash])
        let base = String(path[path.index(after: slash)...])
        let dir = Glibc.open(dirPath, 0o10000000 /* O_PATH */ | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard dir >= 0 else { throw System.failure("open", dirPath) }
        defer { System.close(dir) }
        var now = stat()
        guard fstatat(dir, base, &now, AT_SYMLINK_NOFOLLOW) == 0, now.st_dev == st.st_dev, now.st_ino == st.st_ino else {
            throw AspectsError(.badTable, field: "--table", "\"\(path)\" was replaced while it was being destroyed; nothing was removed",
                               fix: "check who else works on this table, then try again")
        }
        if aspects_segment_remove_anchored(fd, geteuid()) == -1 {
            throw System.failure("remove the shared memory segment of", path, errno)
        }
        try System.valueOrErrno("unlink", path) { unlinkat(dir, base, 0) }
    }
}
