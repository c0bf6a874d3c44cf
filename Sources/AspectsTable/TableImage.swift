#if canImport(Glibc)
import Glibc
#endif
import CAspectsABI

/// A table as raw bytes, for the table-reader fuzz target and its replay in the tests, which
/// read tables made of arbitrary bytes: the bytes a table's segment holds, and a table planted
/// from such bytes (a new private segment holding them, named by an anchor file).
package enum TableImage {
    /// The bytes of a table, as its segment holds them.
    package static func bytes(of table: AdviceTable) -> [UInt8] {
        [UInt8](UnsafeRawBufferPointer(start: table.base, count: table.size))
    }

    /// Makes `image` the table at `path` (a new file, or one it replaces): a segment of its
    /// size holding it, its header given the anchor's identity when it has room for one (so
    /// the image reaches the checks after that one), and an anchor naming it. The segment's
    /// id, for `remove`, or nil when none could be made.
    package static func plant(_ image: [UInt8], at path: String) -> Int32? {
        guard !image.isEmpty else { return nil }
        var attached: UnsafeMutableRawPointer? = nil
        let shmid = aspects_segment_create(UInt64(image.count), 0, 0, &attached)
        guard shmid >= 0, let attached else { return nil }
        let identity: (UInt64, UInt64) = (0x6166_7a7a_696d_6167, 0x6174_6162_6c65_7331)
        image.withUnsafeBytes { attached.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        if image.count >= MemoryLayout<aspects_table_header>.size {
            attached.assumingMemoryBound(to: aspects_table_header.self).pointee.identity = identity
        }
        aspects_segment_detach(attached)
        let fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o600)
        defer { if fd >= 0 { close(fd) } }
        guard fd >= 0, (try? TableFile.writeAnchor(fd, shmid: shmid, size: image.count, identity: identity, path)) != nil else {
            _ = aspects_segment_remove(shmid)
            return nil
        }
        return shmid
    }

    /// Removes a segment `plant` made.
    package static func remove(_ shmid: Int32) { _ = aspects_segment_remove(shmid) }
}
