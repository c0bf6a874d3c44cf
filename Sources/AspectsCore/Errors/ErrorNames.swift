/// Errno, EAI_* and signal names of Linux/glibc (x86-64 and aarch64 share these numbers).
/// Generated once from <errno.h>; the numbers are the kernel's, which never change.
package enum ErrorNames {
    package static let errnos: [(name: String, value: Int32)] = [
        ("EPERM", 1),
        ("ENOENT", 2),
        ("ESRCH", 3),
        ("EINTR", 4),
        ("EIO", 5),
        ("ENXIO", 6),
        ("E2BIG", 7),
        ("ENOEXEC", 8),
        ("EBADF", 9),
        ("ECHILD", 10),
        ("EAGAIN", 11),
        ("ENOMEM", 12),
        ("EACCES", 13),
        ("EFAULT", 14),
        ("ENOTBLK", 15),
        ("EBUSY", 16),
        ("EEXIST", 17),
        ("EXDEV", 18),
        ("ENODEV", 19),
        ("ENOTDIR", 20),
        ("EISDIR", 21),
        ("EINVAL", 22),
        ("ENFILE", 23),
        ("EMFILE", 24),
        ("ENOTTY", 25),
        ("ETXTBSY", 26),
        ("EFBIG", 27),
        ("ENOSPC", 28),
        ("ESPIPE", 29),
        ("EROFS", 30),
        ("EMLINK", 31),
        ("EPIPE", 32),
        ("EDOM", 33),
        ("ERANGE", 34),
        ("EDEADLK", 35),
        ("ENAMETOOLONG", 36),
        ("ENOLCK", 37),
        ("ENOSYS", 38),
        ("ENOTEMPTY", 39),
        ("ELOOP", 40),
        ("EWOULDBLOCK", 11),
        ("ENOMSG", 42),
        ("EIDRM", 43),
        ("ENOSTR", 60),
        ("ENODATA", 61),
        ("ETIME", 62),
        ("ENOSR", 63),
        ("EREMOTE", 66),
        ("ENOLINK", 67),
        ("EPROTO", 71),
        ("EMULTIHOP", 72),
        ("EBADMSG", 74),
        ("EOVERFLOW", 75),
        ("EILSEQ", 84),
        ("EUSERS", 87),
        ("ENOTSOCK", 88),
        ("EDESTADDRREQ", 89),
        ("EMSGSIZE", 90),
        ("EPROTOTYPE", 91),
        ("ENOPROTOOPT", 92),
        ("EPROTONOSUPPORT", 93),
        ("ESOCKTNOSUPPORT", 94),
        ("EOPNOTSUPP", 95),
        ("ENOTSUP", 95),
        ("EPFNOSUPPORT", 96),
        ("EAFNOSUPPORT", 97),
        ("EADDRINUSE", 98),
        ("EADDRNOTAVAIL", 99),
        ("ENETDOWN", 100),
        ("ENETUNREACH", 101),
        ("ENETRESET", 102),
        ("ECONNABORTED", 103),
        ("ECONNRESET", 104),
        ("ENOBUFS", 105),
        ("EISCONN", 106),
        ("ENOTCONN", 107),
        ("ESHUTDOWN", 108),
        ("ETOOMANYREFS", 109),
        ("ETIMEDOUT", 110),
        ("ECONNREFUSED", 111),
        ("EHOSTDOWN", 112),
        ("EHOSTUNREACH", 113),
        ("EALREADY", 114),
        ("EINPROGRESS", 115),
        ("ESTALE", 116),
        ("EDQUOT", 122),
        ("ECANCELED", 125),
        ("EOWNERDEAD", 130),
        ("ENOTRECOVERABLE", 131),
        ("ERFKILL", 132),
        ("EHWPOISON", 133),
        ("ENOMEDIUM", 123),
        ("EMEDIUMTYPE", 124),
        ("EKEYEXPIRED", 127),
        ("EKEYREVOKED", 128),
        ("EKEYREJECTED", 129),
        ("ENOKEY", 126),
        ("EREMOTEIO", 121),
        ("EBADFD", 77),
        ("EBADE", 52),
        ("EBADR", 53),
        ("EXFULL", 54),
        ("ENOANO", 55),
        ("EBADRQC", 56),
        ("EBADSLT", 57),
        ("EDEADLOCK", 35),
        ("EBFONT", 59),
        ("ENONET", 64),
        ("ENOPKG", 65),
        ("EADV", 68),
        ("ESRMNT", 69),
        ("ECOMM", 70),
        ("EDOTDOT", 73),
        ("ENOTUNIQ", 76),
        ("EREMCHG", 78),
        ("ELIBACC", 79),
        ("ELIBBAD", 80),
        ("ELIBSCN", 81),
        ("ELIBMAX", 82),
        ("ELIBEXEC", 83),
        ("ERESTART", 85),
        ("ESTRPIPE", 86),
        ("EUCLEAN", 117),
        ("ENOTNAM", 118),
        ("ENAVAIL", 119),
        ("EISNAM", 120),
        ("ECHRNG", 44),
        ("EL2NSYNC", 45),
        ("EL3HLT", 46),
        ("EL3RST", 47),
        ("ELNRNG", 48),
        ("EUNATCH", 49),
        ("ENOCSI", 50),
        ("EL2HLT", 51),
    ]
    package static let eaiCodes: [(name: String, value: Int32)] = [
        ("EAI_BADFLAGS", -1),
        ("EAI_NONAME", -2),
        ("EAI_AGAIN", -3),
        ("EAI_FAIL", -4),
        ("EAI_FAMILY", -6),
        ("EAI_SOCKTYPE", -7),
        ("EAI_SERVICE", -8),
        ("EAI_MEMORY", -10),
        ("EAI_SYSTEM", -11),
        ("EAI_OVERFLOW", -12),
        ("EAI_NODATA", -5),
        ("EAI_ADDRFAMILY", -9),
    ]
    package static let signals: [(name: String, value: Int32)] = [
        ("SIGHUP", 1),
        ("SIGINT", 2),
        ("SIGQUIT", 3),
        ("SIGILL", 4),
        ("SIGTRAP", 5),
        ("SIGABRT", 6),
        ("SIGBUS", 7),
        ("SIGFPE", 8),
        ("SIGKILL", 9),
        ("SIGUSR1", 10),
        ("SIGSEGV", 11),
        ("SIGUSR2", 12),
        ("SIGPIPE", 13),
        ("SIGALRM", 14),
        ("SIGTERM", 15),
        ("SIGSTKFLT", 16),
        ("SIGCHLD", 17),
        ("SIGCONT", 18),
        ("SIGSTOP", 19),
        ("SIGTSTP", 20),
        ("SIGTTIN", 21),
        ("SIGTTOU", 22),
        ("SIGURG", 23),
        ("SIGXCPU", 24),
        ("SIGXFSZ", 25),
        ("SIGVTALRM", 26),
        ("SIGPROF", 27),
        ("SIGWINCH", 28),
        ("SIGIO", 29),
        ("SIGPWR", 30),
        ("SIGSYS", 31),
    ]

    private static let errnoByName: [String: Int32] = Dictionary(errnos.map { ($0.name, $0.value) }, uniquingKeysWith: { a, _ in a })
    private static let eaiByName: [String: Int32] = Dictionary(eaiCodes.map { ($0.name, $0.value) }, uniquingKeysWith: { a, _ in a })
    private static let signalByName: [String: Int32] = Dictionary(signals.map { ($0.name, $0.value) }, uniquingKeysWith: { a, _ in a })

    /// h_errno values of <netdb.h> (gethostbyname and friends).
    package static let hErrnoCodes: [(name: String, value: Int32)] = [
        ("HOST_NOT_FOUND", 1), ("TRY_AGAIN", 2), ("NO_RECOVERY", 3), ("NO_DATA", 4), ("NO_ADDRESS", 4),
    ]

    package static func errno(_ name: String) -> Int32? { errnoByName[name] }
    package static func hErrno(_ name: String) -> Int32? { hErrnoCodes.first { $0.name == name }?.value }
    package static func hErrnoName(_ value: Int32) -> String? { hErrnoCodes.first { $0.value == value }?.name }
    package static func eai(_ name: String) -> Int32? { eaiByName[name] }
    /// `SIGSEGV`, `SEGV` or a number.
    package static func signal(_ name: String) -> Int32? {
        signalByName[name] ?? signalByName["SIG" + name] ?? Int32(name).flatMap { (1...64).contains($0) ? $0 : nil }
    }

    /// The first name of an errno value (EAGAIN rather than EWOULDBLOCK).
    package static func errnoName(_ value: Int32) -> String? { errnos.first { $0.value == value }?.name }
    package static func eaiName(_ value: Int32) -> String? { eaiCodes.first { $0.value == value }?.name }
    package static func signalName(_ value: Int32) -> String? { signals.first { $0.value == value }?.name }

    /// Names close to a misspelled one, for "did you mean" hints.
    package static func suggestions(for name: String, in candidates: [String]) -> [String] {
        let upper = name.uppercased()
        if let exact = candidates.first(where: { $0.uppercased() == upper }) { return [exact] }
        return candidates.filter { editDistance($0.uppercased(), upper) <= 2 }.prefix(3).map { $0 }
    }

    package static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var prev = Array(0...b.count)
        for i in 1...a.count {
            var cur = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            prev = cur
        }
        return prev[b.count]
    }
}
