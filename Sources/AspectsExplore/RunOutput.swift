#if canImport(Glibc)
import Glibc
#endif
import CAspectsABI
import AspectsCore

/// 128-bit FNV-1a over a byte stream, fed in chunks (`aspects_fnv1a128_add`): what tells two
/// runs' outputs apart without keeping either (not for security: a program's output is not an
/// adversary of its own baseline).
package struct OutputDigest: Sendable, Equatable {
    private var words: [UInt64] = [ASPECTS_FNV128_BASIS_LO, ASPECTS_FNV128_BASIS_HI]

    package init() {}

    package mutating func add(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress else { return }
        words.withUnsafeMutableBufferPointer { aspects_fnv1a128_add($0.baseAddress, base.assumingMemoryBound(to: UInt8.self), bytes.count) }
    }

    package mutating func add(_ bytes: [UInt8]) { bytes.withUnsafeBytes { add($0) } }

    /// 32 hex digits, the high word first.
    package var hex: String {
        words.reversed().map { w in
            let s = String(w, radix: 16)
            return String(repeating: "0", count: 16 - s.count) + s
        }.joined()
    }

    /// The digest of a whole text's UTF-8.
    package static func of(_ text: String) -> String {
        var d = OutputDigest()
        d.add(Array(text.utf8))
        return d.hex
    }
}

/// One output stream of a run (stdout or stderr) as explore keeps it: its file read while it
/// grows, every byte counted and digested, the last `tailCap` held in memory for the record
/// and the reports, what was read past `fileCap` punched out of the file, and the file cut to
/// `fileCap` at the end. Nothing else is kept, however much the program writes; the disk
/// holds at most the cap, the reading's `backlog` and what 10 ms of writing adds.
struct OutputCapture {
    /// explore's own descriptor of the file, for reading (the command writes through another).
    let reader: Int32
    let writer: Int32
    let fileCap: UInt64
    let tailCap: Int
    private(set) var total: UInt64 = 0
    /// Where the file has been punched out up to (from `fileCap`).
    private var punched: UInt64
    private var digest = OutputDigest()
    private var tail: [UInt8] = []

    init(file: Int32, path: String, fileCap: UInt64, tailCap: Int) throws(AspectsError) {
        // The same file, not whatever is at the path by now.
        reader = try System.open("/proc/self/fd/\(file)", O_RDONLY)
        writer = file
        self.fileCap = fileCap
        self.tailCap = tailCap
        punched = fileCap
    }

    func close() { System.close(reader) }

    static let chunk = 1 << 16
    /// How far reading may fall behind the writer (a hang printing for ever writes faster
    /// than a digest is computed): beyond, the unread bytes are counted and punched out
    /// unread, and the stream, no longer digested whole, never compares equal.
    static let backlog: UInt64 = 64 << 20
    /// Whether every byte was digested.
    private(set) var whole = true

    /// Reads what was written since the last call (up to the size the file had then, so that
    /// a writer faster than the reading cannot keep it here), then punches out what lies read
    /// past the cap (whole 64 KiB blocks: a file system frees whole blocks).
    mutating func readNew() {
        var st = stat()
        guard fstat(reader, &st) == 0 else { return }
        let size = UInt64(max(0, st.st_size))
        if size > total + Self.backlog {
            whole = false
            total = size - UInt64(tailCap)
            tail.removeAll()
        }
        withUnsafeTemporaryAllocation(byteCount: Self.chunk, alignment: 16) { buffer in
            while total < size {
                let n = pread(reader, buffer.baseAddress, min(Self.chunk, Int(size - total)), off_t(total))
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { break }
                take(UnsafeRawBufferPointer(rebasing: buffer[..<n]))
            }
        }
        let end = total / UInt64(Self.chunk) * UInt64(Self.chunk)
        if end > punched, aspects_punch_hole(writer, Int64(punched), Int64(end - punched)) == 0 {
            punched = end
        }
    }

    /// After the run: reads the rest and cuts the file to the cap.
    mutating func finish() {
        readNew()
        if total > fileCap { _ = ftruncate(writer, off_t(fileCap)) }
    }

    private mutating func take(_ chunk: UnsafeRawBufferPointer) {
        total += UInt64(chunk.count)
        digest.add(chunk)
        tail.append(contentsOf: chunk.suffix(tailCap))
        // Trimmed in batches: the tail stays between one and two caps long in between.
        if tail.count > 2 * tailCap { tail.removeFirst(tail.count - tailCap) }
    }

    /// The digest's hex, "" when bytes went unread (`backlog`).
    var digestHex: String { whole ? digest.hex : "" }

    /// The last `bytes` (at most the tail kept) as text, any invalid UTF-8 as U+FFFD: a
    /// program's output is bytes, and reading it as strict UTF-8 once dropped a whole output
    /// for one bad byte.
    func tailText(_ bytes: Int) -> String {
        String(decoding: tail.suffix(min(bytes, tailCap)), as: UTF8.self)
    }
}
