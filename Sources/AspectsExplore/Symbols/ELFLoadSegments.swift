/// An ELF file's PT_LOAD segments: sites are offsets in the file, debug information speaks of
/// link-time addresses.
package struct ELFLoadSegments {
    package struct Segment { package var offset, address, size: UInt64 }
    package let segments: [Segment]

    package init?(path: String) {
        guard let file = ELFFile(path: path) else { return nil }
        self.init(file)
    }

    init?(_ file: ELFFile) {
        let loads = file.programHeaders.filter { $0.type == 1 }  // PT_LOAD
        guard !loads.isEmpty else { return nil }
        segments = loads.map { Segment(offset: $0.offset, address: $0.address, size: $0.fileSize) }
    }

    package func address(ofFileOffset offset: UInt64) -> UInt64? {
        segments.first { offset >= $0.offset && offset - $0.offset < $0.size }.map { offset - $0.offset &+ $0.address }
    }
}
