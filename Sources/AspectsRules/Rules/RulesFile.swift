#if canImport(Glibc)
import Glibc
#endif
import AspectsCore

/// Reads a rules file the way users hand one over: a regular file, a FIFO, `/dev/stdin`, a
/// shell's `<(...)` (/dev/fd/N), or `-` for standard input — by plain read(2) to the end, so
/// that pipes work as files do. What is not JSON text says so, naming the file.
package enum RulesFile {
    /// The most a rules file may hold.
    package static let limit = 64 << 20

    package static func read(_ path: String) throws(AspectsError) -> String {
        let fd: Int32
        if path == "-" {
            fd = dup(0)
        } else {
            fd = open(path, O_RDONLY | O_CLOEXEC)
        }
        guard fd >= 0 else {
            let e = errno
            let what = e == ENOENT ? "there is no such file" : String(cString: strerror(e))
            throw AspectsError(.noInput, location: path, "cannot read the rules file: \(what)",
                               fix: e == ENOENT ? "check the path" : "check the file's permissions")
        }
        defer { close(fd) }
        var st = stat()
        if fstat(fd, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR {
            throw AspectsError(.noInput, location: path, "\(path) is a directory; --rules takes a JSON file",
                               fix: "name the rules file inside it")
        }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n == 0 { break }
            if n < 0 {
                if errno == EINTR { continue }
                let e = errno
                throw AspectsError(.noInput, location: path, "cannot read the rules file: \(String(cString: strerror(e)))")
            }
            bytes += chunk[0..<n]
            if bytes.count > limit {
                throw AspectsError(.limit, location: path, "the rules file is larger than \(limit >> 20) MiB", fix: "split it, or remove what is not rules")
            }
        }
        return try text(bytes, path: path)
    }

    /// The bytes as UTF-8 text; invalid UTF-8 is a data error that says where.
    package static func text(_ bytes: [UInt8], path: String) throws(AspectsError) -> String {
        if let s = String(validating: bytes, as: UTF8.self) { return s }
        // Where the first bad sequence starts, and its line.
        var offset = 0, line = 1
        var i = 0
        while i < bytes.count {
            let b = bytes[i]
            let len = b < 0x80 ? 1 : b >> 5 == 0b110 ? 2 : b >> 4 == 0b1110 ? 3 : b >> 3 == 0b11110 ? 4 : 0
            let ok = len > 0 && i + len <= bytes.count && (1..<len).allSatisfy { bytes[i + $0] >> 6 == 0b10 }
                && String(validating: bytes[i..<(i + len)], as: UTF8.self) != nil
            if !ok { offset = i; break }
            if b == 0x0a { line += 1 }
            i += len
        }
        throw AspectsError(.malformedJSON, location: "\(path):\(line)", "the rules file is not UTF-8 text (a bad byte 0x\(String(bytes[offset], radix: 16)) at byte offset \(offset))",
                           fix: "save it as UTF-8")
    }
}
