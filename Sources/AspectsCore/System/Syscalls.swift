#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Every OS call of the Swift layers goes through here, so each failure becomes one typed
/// AspectsError naming the call, the object and the errno.
package enum System {
    package static func errnoText(_ e: Int32) -> String {
        "\(ErrorNames.errnoName(e) ?? "errno \(e)"): \(String(cString: strerror(e)))"
    }

    package static func failure(_ call: String, _ object: String, _ e: Int32 = errno) -> AspectsError {
        AspectsError(.system, "\(call) \(object) failed: \(errnoText(e))")
    }

    /// Retries a call interrupted by a signal; -1 becomes a thrown error.
    @discardableResult
    package static func valueOrErrno<T: BinaryInteger>(_ call: String, _ object: String, _ body: () -> T) throws(AspectsError) -> T {
        while true {
            let r = body()
            if r != -1 { return r }
            if errno == EINTR { continue }
            throw failure(call, object)
        }
    }

    package static func open(_ path: String, _ flags: Int32, _ mode: mode_t = 0) throws(AspectsError) -> Int32 {
        try valueOrErrno("open", path) { Glibc.open(path, flags | O_CLOEXEC, mode) }
    }

    package static func close(_ fd: Int32) { _ = Glibc.close(fd) }

    package static func truncate(_ fd: Int32, _ size: Int, _ object: String) throws(AspectsError) {
        try valueOrErrno("ftruncate", object) { ftruncate(fd, off_t(size)) }
    }

    package static func unlock(_ fd: Int32) { _ = flock(fd, LOCK_UN) }

    package static func unlink(_ path: String) throws(AspectsError) {
        try valueOrErrno("unlink", path) { Glibc.unlink(path) }
    }

    package static func realtimeNanoseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    package static var pid: Int32 { getpid() }

    package static func processExists(_ pid: Int32) -> Bool { pid > 0 && (kill(pid, 0) == 0 || errno == EPERM) }
}
