import Glibc

/// Reading a /proc file whole. Its size is 0 to stat and the kernel hands it out a page per
/// read, so Foundation's `String(contentsOfFile:)` returned only the first 4 KiB: with a few
/// dozen shared memory segments on the machine, `gc` no longer saw the leftover of a killed
/// `create` past the 24th line of /proc/sysvipc/shm. Reads until end of file, at most `limit`
/// bytes.
package enum ProcFile {
    package static func bytes(_ path: String, limit: Int = 16 << 20) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: min(limit, 4096))
        var count = 0
        while count < limit {
            if count == buffer.count { buffer += [UInt8](repeating: 0, count: min(buffer.count, limit - count)) }
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress! + count, $0.count - count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            count += n
        }
        return Array(buffer.prefix(count))
    }

    package static func text(_ path: String, limit: Int = 16 << 20) -> String? {
        bytes(path, limit: limit).map { String(decoding: $0, as: UTF8.self) }
    }
}
