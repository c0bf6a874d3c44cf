import AspectsRules
import CZlib
import Foundation

/// The separate debug file of an object without its own `.debug_line`, where addr2line
/// (binutils) would find it: by build-id under the global debug directory, then by
/// `.gnu_debuglink` beside the object, in its `.debug/` subdirectory, and under the global
/// debug directory by the object's directory — a debuglink file only when its CRC-32 matches,
/// a build-id file only when its own build-id does.
package enum DebugFileLocator {
    package static let globalDirectory = "/usr/lib/debug"

    static func debugFile(for object: ELFFile, globalDirectory: String = globalDirectory) -> ELFFile? {
        if let id = object.buildID, id.count >= 2 {
            let hex = id.map { String(format: "%02x", $0) }.joined()
            let path = "\(globalDirectory)/.build-id/\(hex.prefix(2))/\(hex.dropFirst(2)).debug"
            if let file = ELFFile(path: path), file.buildID == id { return file }
        }
        guard let link = object.debugLink else { return nil }
        var directories: [String] = []
        for p in [object.path, ProcessGlob.realPath(object.path)].compactMap({ $0 }) {
            let d = (p as NSString).deletingLastPathComponent
            if !directories.contains(d) { directories.append(d) }
        }
        for d in directories {
            for candidate in [
                "\(d)/\(link.name)", "\(d)/.debug/\(link.name)", "\(globalDirectory)\(d.hasPrefix("/") ? "" : "/")\(d)/\(link.name)",
            ] {
                guard candidate != object.path, let file = ELFFile(path: candidate), crc32(of: file) == link.crc else { continue }
                return file
            }
        }
        return nil
    }

    /// The CRC-32 (zlib's, as `.gnu_debuglink` uses) of the whole file, read in pieces.
    static func crc32(of file: ELFFile) -> UInt32? {
        var crc: uLong = CZlib.crc32(0, nil, 0)
        var offset: UInt64 = 0
        let piece: UInt64 = 1 << 20
        while offset < file.size {
            let n = min(piece, file.size - offset)
            guard let bytes = file.read(at: offset, count: n) else { return nil }
            crc = bytes.withUnsafeBufferPointer { CZlib.crc32(crc, $0.baseAddress, uInt(n)) }
            offset += n
        }
        return UInt32(truncatingIfNeeded: crc)
    }
}
