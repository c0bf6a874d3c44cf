
// The errno and signal names of Linux/glibc as typed constants, one per name of
// AspectsCore's ErrorNames (x86-64 and aarch64 share them); each comment is strerror(3)'s or
// strsignal(3)'s text. AspectsTestingTests checks that the lists agree.

extension Rule.Errno {
    /// Every constant below, in ErrorNames' order.
    public static let all: [Rule.Errno] = [
        .EPERM, .ENOENT, .ESRCH, .EINTR, .EIO, .ENXIO, .E2BIG, .ENOEXEC,
        .EBADF, .ECHILD, .EAGAIN, .ENOMEM, .EACCES, .EFAULT, .ENOTBLK, .EBUSY,
        .EEXIST, .EXDEV, .ENODEV, .ENOTDIR, .EISDIR, .EINVAL, .ENFILE, .EMFILE,
        .ENOTTY, .ETXTBSY, .EFBIG, .ENOSPC, .ESPIPE, .EROFS, .EMLINK, .EPIPE,
        .EDOM, .ERANGE, .EDEADLK, .ENAMETOOLONG, .ENOLCK, .ENOSYS, .ENOTEMPTY, .ELOOP,
        .EWOULDBLOCK, .ENOMSG, .EIDRM, .ENOSTR, .ENODATA, .ETIME, .ENOSR, .EREMOTE,
        .ENOLINK, .EPROTO, .EMULTIHOP, .EBADMSG, .EOVERFLOW, .EILSEQ, .EUSERS, .ENOTSOCK,
        .EDESTADDRREQ, .EMSGSIZE, .EPROTOTYPE, .ENOPROTOOPT, .EPROTONOSUPPORT, .ESOCKTNOSUPPORT, .EOPNOTSUPP, .ENOTSUP,
        .EPFNOSUPPORT, .EAFNOSUPPORT, .EADDRINUSE, .EADDRNOTAVAIL, .ENETDOWN, .ENETUNREACH, .ENETRESET, .ECONNABORTED,
        .ECONNRESET, .ENOBUFS, .EISCONN, .ENOTCONN, .ESHUTDOWN, .ETOOMANYREFS, .ETIMEDOUT, .ECONNREFUSED,
        .EHOSTDOWN, .EHOSTUNREACH, .EALREADY, .EINPROGRESS, .ESTALE, .EDQUOT, .ECANCELED, .EOWNERDEAD,
        .ENOTRECOVERABLE, .ERFKILL, .EHWPOISON, .ENOMEDIUM, .EMEDIUMTYPE, .EKEYEXPIRED, .EKEYREVOKED, .EKEYREJECTED,
        .ENOKEY, .EREMOTEIO, .EBADFD, .EBADE, .EBADR, .EXFULL, .ENOANO, .EBADRQC,
        .EBADSLT, .EDEADLOCK, .EBFONT, .ENONET, .ENOPKG, .EADV, .ESRMNT, .ECOMM,
        .EDOTDOT, .ENOTUNIQ, .EREMCHG, .ELIBACC, .ELIBBAD, .ELIBSCN, .ELIBMAX, .ELIBEXEC,
        .ERESTART, .ESTRPIPE, .EUCLEAN, .ENOTNAM, .ENAVAIL, .EISNAM, .ECHRNG, .EL2NSYNC,
        .EL3HLT, .EL3RST, .ELNRNG, .EUNATCH, .ENOCSI, .EL2HLT,
    ]

    /// EPERM (1): Operation not permitted.
    public static let EPERM = Rule.Errno("EPERM")
    /// ENOENT (2): No such file or directory.
    public static let ENOENT = Rule.Errno("ENOENT")
    /// ESRCH (3): No such process.
    public static let ESRCH = Rule.Errno("ESRCH")
    /// EINTR (4): Interrupted system call.
    public static let EINTR = Rule.Errno("EINTR")
    /// EIO (5): Input/output error.
    public static let EIO = Rule.Errno("EIO")
    /// ENXIO (6): No such device or address.
    public static let ENXIO = Rule.Errno("ENXIO")
    /// E2BIG (7): Argument list too long.
    public static let E2BIG = Rule.Errno("E2BIG")
    /// ENOEXEC (8): Exec format error.
    public static let ENOEXEC = Rule.Errno("ENOEXEC")
    /// EBADF (9): Bad file descriptor.
    public static let EBADF = Rule.Errno("EBADF")
    /// ECHILD (10): No child processes.
    public static let ECHILD = Rule.Errno("ECHILD")
    /// EAGAIN (11): Resource temporarily unavailable.
    public static let EAGAIN = Rule.Errno("EAGAIN")
    /// ENOMEM (12): Cannot allocate memory.
    public static let ENOMEM = Rule.Errno("ENOMEM")
    /// EACCES (13): Permission denied.
    public static let EACCES = Rule.Errno("EACCES")
    /// EFAULT (14): Bad address.
    public static let EFAULT = Rule.Errno("EFAULT")
    /// ENOTBLK (15): Block device required.
    public static let ENOTBLK = Rule.Errno("ENOTBLK")
    /// EBUSY (16): Device or resource busy.
    public static let EBUSY = Rule.Errno("EBUSY")
    /// EEXIST (17): File exists.
    public static let EEXIST = Rule.Errno("EEXIST")
    /// EXDEV (18): Invalid cross-device link.
    public static let EXDEV = Rule.Errno("EXDEV")
    /// ENODEV (19): No such device.
    public static let ENODEV = Rule.Errno("ENODEV")
    /// ENOTDIR (20): Not a directory.
    public static let ENOTDIR = Rule.Errno("ENOTDIR")
    /// EISDIR (21): Is a directory.
    public static let EISDIR = Rule.Errno("EISDIR")
    /// EINVAL (22): Invalid argument.
    public static let EINVAL = Rule.Errno("EINVAL")
    /// ENFILE (23): Too many open files in system.
    public static let ENFILE = Rule.Errno("ENFILE")
    /// EMFILE (24): Too many open files.
    public static let EMFILE = Rule.Errno("EMFILE")
    /// ENOTTY (25): Inappropriate ioctl for device.
    public static let ENOTTY = Rule.Errno("ENOTTY")
    /// ETXTBSY (26): Text file busy.
    public static let ETXTBSY = Rule.Errno("ETXTBSY")
    /// EFBIG (27): File too large.
    public static let EFBIG = Rule.Errno("EFBIG")
    /// ENOSPC (28): No space left on device.
    public static let ENOSPC = Rule.Errno("ENOSPC")
    /// ESPIPE (29): Illegal seek.
    public static let ESPIPE = Rule.Errno("ESPIPE")
    /// EROFS (30): Read-only file system.
    public static let EROFS = Rule.Errno("EROFS")
    /// EMLINK (31): Too many links.
    public static let EMLINK = Rule.Errno("EMLINK")
    /// EPIPE (32): Broken pipe.
    public static let EPIPE = Rule.Errno("EPIPE")
    /// EDOM (33): Numerical argument out of domain.
    public static let EDOM = Rule.Errno("EDOM")
    /// ERANGE (34): Numerical result out of range.
    public static let ERANGE = Rule.Errno("ERANGE")
    /// EDEADLK (35): Resource deadlock avoided.
    public static let EDEADLK = Rule.Errno("EDEADLK")
    /// ENAMETOOLONG (36): File name too long.
    public static let ENAMETOOLONG = Rule.Errno("ENAMETOOLONG")
    /// ENOLCK (37): No locks available.
    public static let ENOLCK = Rule.Errno("ENOLCK")
    /// ENOSYS (38): Function not implemented.
    public static let ENOSYS = Rule.Errno("ENOSYS")
    /// ENOTEMPTY (39): Directory not empty.
    public static let ENOTEMPTY = Rule.Errno("ENOTEMPTY")
    /// ELOOP (40): Too many levels of symbolic links.
    public static let ELOOP = Rule.Errno("ELOOP")
    /// EWOULDBLOCK (11): Resource temporarily unavailable.
    public static let EWOULDBLOCK = Rule.Errno("EWOULDBLOCK")
    /// ENOMSG (42): No message of desired type.
    public static let ENOMSG = Rule.Errno("ENOMSG")
    /// EIDRM (43): Identifier removed.
    public static let EIDRM = Rule.Errno("EIDRM")
    /// ENOSTR (60): Device not a stream.
    public static let ENOSTR = Rule.Errno("ENOSTR")
    /// ENODATA (61): No data available.
    public static let ENODATA = Rule.Errno("ENODATA")
    /// ETIME (62): Timer expired.
    public static let ETIME = Rule.Errno("ETIME")
    /// ENOSR (63): Out of streams resources.
    public static let ENOSR = Rule.Errno("ENOSR")
    /// EREMOTE (66): Object is remote.
    public static let EREMOTE = Rule.Errno("EREMOTE")
    /// ENOLINK (67): Link has been severed.
    public static let ENOLINK = Rule.Errno("ENOLINK")
    /// EPROTO (71): Protocol error.
    public static let EPROTO = Rule.Errno("EPROTO")
    /// EMULTIHOP (72): Multihop attempted.
    public static let EMULTIHOP = Rule.Errno("EMULTIHOP")
    /// EBADMSG (74): Bad message.
    public static let EBADMSG = Rule.Errno("EBADMSG")
    /// EOVERFLOW (75): Value too large for defined data type.
    public static let EOVERFLOW = Rule.Errno("EOVERFLOW")
    /// EILSEQ (84): Invalid or incomplete multibyte or wide character.
    public static let EILSEQ = Rule.Errno("EILSEQ")
    /// EUSERS (87): Too many users.
    public static let EUSERS = Rule.Errno("EUSERS")
    /// ENOTSOCK (88): Socket operation on non-socket.
    public static let ENOTSOCK = Rule.Errno("ENOTSOCK")
    /// EDESTADDRREQ (89): Destination address required.
    public static let EDESTADDRREQ = Rule.Errno("EDESTADDRREQ")
    /// EMSGSIZE (90): Message too long.
    public static let EMSGSIZE = Rule.Errno("EMSGSIZE")
    /// EPROTOTYPE (91): Protocol wrong type for socket.
    public static let EPROTOTYPE = Rule.Errno("EPROTOTYPE")
    /// ENOPROTOOPT (92): Protocol not available.
    public static let ENOPROTOOPT = Rule.Errno("ENOPROTOOPT")
    /// EPROTONOSUPPORT (93): Protocol not supported.
    public static let EPROTONOSUPPORT = Rule.Errno("EPROTONOSUPPORT")
    /// ESOCKTNOSUPPORT (94): Socket type not supported.
    public static let ESOCKTNOSUPPORT = Rule.Errno("ESOCKTNOSUPPORT")
    /// EOPNOTSUPP (95): Operation not supported.
    public static let EOPNOTSUPP = Rule.Errno("EOPNOTSUPP")
    /// ENOTSUP (95): Operation not supported.
    public static let ENOTSUP = Rule.Errno("ENOTSUP")
    /// EPFNOSUPPORT (96): Protocol family not supported.
    public static let EPFNOSUPPORT = Rule.Errno("EPFNOSUPPORT")
    /// EAFNOSUPPORT (97): Address family not supported by protocol.
    public static let EAFNOSUPPORT = Rule.Errno("EAFNOSUPPORT")
    /// EADDRINUSE (98): Address already in use.
    public static let EADDRINUSE = Rule.Errno("EADDRINUSE")
    /// EADDRNOTAVAIL (99): Cannot assign requested address.
    public static let EADDRNOTAVAIL = Rule.Errno("EADDRNOTAVAIL")
    /// ENETDOWN (100): Network is down.
    public static let ENETDOWN = Rule.Errno("ENETDOWN")
    /// ENETUNREACH (101): Network is unreachable.
    public static let ENETUNREACH = Rule.Errno("ENETUNREACH")
    /// ENETRESET (102): Network dropped connection on reset.
    public static let ENETRESET = Rule.Errno("ENETRESET")
    /// ECONNABORTED (103): Software caused connection abort.
    public static let ECONNABORTED = Rule.Errno("ECONNABORTED")
    /// ECONNRESET (104): Connection reset by peer.
    public static let ECONNRESET = Rule.Errno("ECONNRESET")
    /// ENOBUFS (105): No buffer space available.
    public static let ENOBUFS = Rule.Errno("ENOBUFS")
    /// EISCONN (106): Transport endpoint is already connected.
    public static let EISCONN = Rule.Errno("EISCONN")
    /// ENOTCONN (107): Transport endpoint is not connected.
    public static let ENOTCONN = Rule.Errno("ENOTCONN")
    /// ESHUTDOWN (108): Cannot send after transport endpoint shutdown.
    public static let ESHUTDOWN = Rule.Errno("ESHUTDOWN")
    /// ETOOMANYREFS (109): Too many references: cannot splice.
    public static let ETOOMANYREFS = Rule.Errno("ETOOMANYREFS")
    /// ETIMEDOUT (110): Connection timed out.
    public static let ETIMEDOUT = Rule.Errno("ETIMEDOUT")
    /// ECONNREFUSED (111): Connection refused.
    public static let ECONNREFUSED = Rule.Errno("ECONNREFUSED")
    /// EHOSTDOWN (112): Host is down.
    public static let EHOSTDOWN = Rule.Errno("EHOSTDOWN")
    /// EHOSTUNREACH (113): No route to host.
    public static let EHOSTUNREACH = Rule.Errno("EHOSTUNREACH")
    /// EALREADY (114): Operation already in progress.
    public static let EALREADY = Rule.Errno("EALREADY")
    /// EINPROGRESS (115): Operation now in progress.
    public static let EINPROGRESS = Rule.Errno("EINPROGRESS")
    /// ESTALE (116): Stale file handle.
    public static let ESTALE = Rule.Errno("ESTALE")
    /// EDQUOT (122): Disk quota exceeded.
    public static let EDQUOT = Rule.Errno("EDQUOT")
    /// ECANCELED (125): Operation canceled.
    public static let ECANCELED = Rule.Errno("ECANCELED")
    /// EOWNERDEAD (130): Owner died.
    public static let EOWNERDEAD = Rule.Errno("EOWNERDEAD")
    /// ENOTRECOVERABLE (131): State not recoverable.
    public static let ENOTRECOVERABLE = Rule.Errno("ENOTRECOVERABLE")
    /// ERFKILL (132): Operation not possible due to RF-kill.
    public static let ERFKILL = Rule.Errno("ERFKILL")
    /// EHWPOISON (133): Memory page has hardware error.
    public static let EHWPOISON = Rule.Errno("EHWPOISON")
    /// ENOMEDIUM (123): No medium found.
    public static let ENOMEDIUM = Rule.Errno("ENOMEDIUM")
    /// EMEDIUMTYPE (124): Wrong medium type.
    public static let EMEDIUMTYPE = Rule.Errno("EMEDIUMTYPE")
    /// EKEYEXPIRED (127): Key has expired.
    public static let EKEYEXPIRED = Rule.Errno("EKEYEXPIRED")
    /// EKEYREVOKED (128): Key has been revoked.
    public static let EKEYREVOKED = Rule.Errno("EKEYREVOKED")
    /// EKEYREJECTED (129): Key was rejected by service.
    public static let EKEYREJECTED = Rule.Errno("EKEYREJECTED")
    /// ENOKEY (126): Required key not available.
    public static let ENOKEY = Rule.Errno("ENOKEY")
    /// EREMOTEIO (121): Remote I/O error.
    public static let EREMOTEIO = Rule.Errno("EREMOTEIO")
    /// EBADFD (77): File descriptor in bad state.
    public static let EBADFD = Rule.Errno("EBADFD")
    /// EBADE (52): Invalid exchange.
    public static let EBADE = Rule.Errno("EBADE")
    /// EBADR (53): Invalid request descriptor.
    public static let EBADR = Rule.Errno("EBADR")
    /// EXFULL (54): Exchange full.
    public static let EXFULL = Rule.Errno("EXFULL")
    /// ENOANO (55): No anode.
    public static let ENOANO = Rule.Errno("ENOANO")
    /// EBADRQC (56): Invalid request code.
    public static let EBADRQC = Rule.Errno("EBADRQC")
    /// EBADSLT (57): Invalid slot.
    public static let EBADSLT = Rule.Errno("EBADSLT")
    /// EDEADLOCK (35): Resource deadlock avoided.
    public static let EDEADLOCK = Rule.Errno("EDEADLOCK")
    /// EBFONT (59): Bad font file format.
    public static let EBFONT = Rule.Errno("EBFONT")
    /// ENONET (64): Machine is not on the network.
    public static let ENONET = Rule.Errno("ENONET")
    /// ENOPKG (65): Package not installed.
    public static let ENOPKG = Rule.Errno("ENOPKG")
    /// EADV (68): Advertise error.
    public static let EADV = Rule.Errno("EADV")
    /// ESRMNT (69): Srmount error.
    public static let ESRMNT = Rule.Errno("ESRMNT")
    /// ECOMM (70): Communication error on send.
    public static let ECOMM = Rule.Errno("ECOMM")
    /// EDOTDOT (73): RFS specific error.
    public static let EDOTDOT = Rule.Errno("EDOTDOT")
    /// ENOTUNIQ (76): Name not unique on network.
    public static let ENOTUNIQ = Rule.Errno("ENOTUNIQ")
    /// EREMCHG (78): Remote address changed.
    public static let EREMCHG = Rule.Errno("EREMCHG")
    /// ELIBACC (79): Can not access a needed shared library.
    public static let ELIBACC = Rule.Errno("ELIBACC")
    /// ELIBBAD (80): Accessing a corrupted shared library.
    public static let ELIBBAD = Rule.Errno("ELIBBAD")
    /// ELIBSCN (81): .lib section in a.out corrupted.
    public static let ELIBSCN = Rule.Errno("ELIBSCN")
    /// ELIBMAX (82): Attempting to link in too many shared libraries.
    public static let ELIBMAX = Rule.Errno("ELIBMAX")
    /// ELIBEXEC (83): Cannot exec a shared library directly.
    public static let ELIBEXEC = Rule.Errno("ELIBEXEC")
    /// ERESTART (85): Interrupted system call should be restarted.
    public static let ERESTART = Rule.Errno("ERESTART")
    /// ESTRPIPE (86): Streams pipe error.
    public static let ESTRPIPE = Rule.Errno("ESTRPIPE")
    /// EUCLEAN (117): Structure needs cleaning.
    public static let EUCLEAN = Rule.Errno("EUCLEAN")
    /// ENOTNAM (118): Not a XENIX named type file.
    public static let ENOTNAM = Rule.Errno("ENOTNAM")
    /// ENAVAIL (119): No XENIX semaphores available.
    public static let ENAVAIL = Rule.Errno("ENAVAIL")
    /// EISNAM (120): Is a named type file.
    public static let EISNAM = Rule.Errno("EISNAM")
    /// ECHRNG (44): Channel number out of range.
    public static let ECHRNG = Rule.Errno("ECHRNG")
    /// EL2NSYNC (45): Level 2 not synchronized.
    public static let EL2NSYNC = Rule.Errno("EL2NSYNC")
    /// EL3HLT (46): Level 3 halted.
    public static let EL3HLT = Rule.Errno("EL3HLT")
    /// EL3RST (47): Level 3 reset.
    public static let EL3RST = Rule.Errno("EL3RST")
    /// ELNRNG (48): Link number out of range.
    public static let ELNRNG = Rule.Errno("ELNRNG")
    /// EUNATCH (49): Protocol driver not attached.
    public static let EUNATCH = Rule.Errno("EUNATCH")
    /// ENOCSI (50): No CSI structure available.
    public static let ENOCSI = Rule.Errno("ENOCSI")
    /// EL2HLT (51): Level 2 halted.
    public static let EL2HLT = Rule.Errno("EL2HLT")
}

extension Rule.Signal {
    /// Every named constant below, in ErrorNames' order.
    public static let all: [Rule.Signal] = [
        .SIGHUP, .SIGINT, .SIGQUIT, .SIGILL, .SIGTRAP, .SIGABRT, .SIGBUS, .SIGFPE,
        .SIGKILL, .SIGUSR1, .SIGSEGV, .SIGUSR2, .SIGPIPE, .SIGALRM, .SIGTERM, .SIGSTKFLT,
        .SIGCHLD, .SIGCONT, .SIGSTOP, .SIGTSTP, .SIGTTIN, .SIGTTOU, .SIGURG, .SIGXCPU,
        .SIGXFSZ, .SIGVTALRM, .SIGPROF, .SIGWINCH, .SIGIO, .SIGPWR, .SIGSYS,
    ]

    /// SIGHUP (1): Hangup.
    public static let SIGHUP = Rule.Signal.named("SIGHUP")
    /// SIGINT (2): Interrupt.
    public static let SIGINT = Rule.Signal.named("SIGINT")
    /// SIGQUIT (3): Quit.
    public static let SIGQUIT = Rule.Signal.named("SIGQUIT")
    /// SIGILL (4): Illegal instruction.
    public static let SIGILL = Rule.Signal.named("SIGILL")
    /// SIGTRAP (5): Trace/breakpoint trap.
    public static let SIGTRAP = Rule.Signal.named("SIGTRAP")
    /// SIGABRT (6): Aborted.
    public static let SIGABRT = Rule.Signal.named("SIGABRT")
    /// SIGBUS (7): Bus error.
    public static let SIGBUS = Rule.Signal.named("SIGBUS")
    /// SIGFPE (8): Floating point exception.
    public static let SIGFPE = Rule.Signal.named("SIGFPE")
    /// SIGKILL (9): Killed.
    public static let SIGKILL = Rule.Signal.named("SIGKILL")
    /// SIGUSR1 (10): User defined signal 1.
    public static let SIGUSR1 = Rule.Signal.named("SIGUSR1")
    /// SIGSEGV (11): Segmentation fault.
    public static let SIGSEGV = Rule.Signal.named("SIGSEGV")
    /// SIGUSR2 (12): User defined signal 2.
    public static let SIGUSR2 = Rule.Signal.named("SIGUSR2")
    /// SIGPIPE (13): Broken pipe.
    public static let SIGPIPE = Rule.Signal.named("SIGPIPE")
    /// SIGALRM (14): Alarm clock.
    public static let SIGALRM = Rule.Signal.named("SIGALRM")
    /// SIGTERM (15): Terminated.
    public static let SIGTERM = Rule.Signal.named("SIGTERM")
    /// SIGSTKFLT (16): Stack fault.
    public static let SIGSTKFLT = Rule.Signal.named("SIGSTKFLT")
    /// SIGCHLD (17): Child exited.
    public static let SIGCHLD = Rule.Signal.named("SIGCHLD")
    /// SIGCONT (18): Continued.
    public static let SIGCONT = Rule.Signal.named("SIGCONT")
    /// SIGSTOP (19): Stopped (signal).
    public static let SIGSTOP = Rule.Signal.named("SIGSTOP")
    /// SIGTSTP (20): Stopped.
    public static let SIGTSTP = Rule.Signal.named("SIGTSTP")
    /// SIGTTIN (21): Stopped (tty input).
    public static let SIGTTIN = Rule.Signal.named("SIGTTIN")
    /// SIGTTOU (22): Stopped (tty output).
    public static let SIGTTOU = Rule.Signal.named("SIGTTOU")
    /// SIGURG (23): Urgent I/O condition.
    public static let SIGURG = Rule.Signal.named("SIGURG")
    /// SIGXCPU (24): CPU time limit exceeded.
    public static let SIGXCPU = Rule.Signal.named("SIGXCPU")
    /// SIGXFSZ (25): File size limit exceeded.
    public static let SIGXFSZ = Rule.Signal.named("SIGXFSZ")
    /// SIGVTALRM (26): Virtual timer expired.
    public static let SIGVTALRM = Rule.Signal.named("SIGVTALRM")
    /// SIGPROF (27): Profiling timer expired.
    public static let SIGPROF = Rule.Signal.named("SIGPROF")
    /// SIGWINCH (28): Window changed.
    public static let SIGWINCH = Rule.Signal.named("SIGWINCH")
    /// SIGIO (29): I/O possible.
    public static let SIGIO = Rule.Signal.named("SIGIO")
    /// SIGPWR (30): Power failure.
    public static let SIGPWR = Rule.Signal.named("SIGPWR")
    /// SIGSYS (31): Bad system call.
    public static let SIGSYS = Rule.Signal.named("SIGSYS")
}
