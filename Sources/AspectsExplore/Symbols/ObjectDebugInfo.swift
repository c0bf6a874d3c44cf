/// What symbolizing reads of one object, without addr2line: its load segments, its function
/// symbols (its own symbol tables and its debug file's) and the line table that names source
/// places (its own `.debug_line`, else its separate debug file's).
package struct ObjectDebugInfo {
    let object: ELFFile
    package let segments: ELFLoadSegments
    /// where the line table is: the object itself or its debug file; nil when neither has one
    let lineFile: ELFFile?
    let debugFile: ELFFile?

    package init?(path: String, debugDirectory: String = DebugFileLocator.globalDirectory) {
        guard let object = ELFFile(path: path), let segments = ELFLoadSegments(object) else { return nil }
        self.object = object
        self.segments = segments
        if Self.hasLineTable(object) {
            debugFile = nil
            lineFile = object
        } else {
            debugFile = DebugFileLocator.debugFile(for: object, globalDirectory: debugDirectory)
            lineFile = debugFile.flatMap { Self.hasLineTable($0) ? $0 : nil }
        }
    }

    /// `.debug_line`, or the old GNU-compressed `.zdebug_line` (which `places` leaves to addr2line).
    static func hasLineTable(_ file: ELFFile) -> Bool {
        file.sections.contains { $0.name == ".debug_line" || $0.name == ".zdebug_line" }
    }

    package var functions: ELFFunctionSymbols { ELFFunctionSymbols(files: [debugFile, object].compactMap { $0 }) }

    /// The source place of each link-time address the line table covers; nil when it cannot be
    /// read here (a compression or DWARF form this reader does not know, a malformed section):
    /// addr2line is asked instead.
    package func places(of addresses: [UInt64]) -> [UInt64: SourcePlace]? {
        guard let file = lineFile else { return [:] }
        guard let line = file.section(named: ".debug_line"), let lineBytes = try? file.contents(of: line) else { return nil }
        // the string sections are read only when present; unreadable ones fail the lookup that needs them
        func optional(_ name: String) -> [UInt8]?? {
            guard let s = file.section(named: name) else { return .some(nil) }
            return (try? file.contents(of: s)).map { .some($0) }
        }
        guard let lineStrings = optional(".debug_line_str"), let strings = optional(".debug_str") else { return nil }
        return lineBytes.withUnsafeBytes { l in
            Self.withOptionalBytes(lineStrings) { ls in
                Self.withOptionalBytes(strings) { s in
                    try? DWARFLineTable(line: l, lineStrings: ls, strings: s).places(of: addresses)
                }
            }
        }
    }

    static func withOptionalBytes<R>(_ bytes: [UInt8]?, _ body: (UnsafeRawBufferPointer?) -> R) -> R {
        guard let bytes else { return body(nil) }
        return bytes.withUnsafeBytes { body($0) }
    }
}
