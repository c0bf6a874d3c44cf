import AspectsCore

/// A table's name and where it lives. The preload applies the same rule (table.c):
/// "demo" is the POSIX shared-memory object /dev/shm/aspects.demo; a name starting with '/'
/// is a file path, for tables outside /dev/shm (a test's temporary directory, say).
package struct TableName: Sendable, Equatable, CustomStringConvertible {
    package let name: String

    package init(_ name: String) throws(AspectsError) {
        if name.hasPrefix("/") {
            guard name.utf8.count < 4000, !name.hasSuffix("/") else {
                throw AspectsError(.badTableName, field: "--table", "\"\(name)\" is not a usable table path")
            }
        } else {
            let ok = !name.isEmpty && name.utf8.count <= 200 && !name.hasPrefix(".") && name.unicodeScalars.allSatisfy {
                ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "." || $0 == "_" || $0 == "-"
            }
            guard ok else {
                throw AspectsError(.badTableName, field: "--table", "\"\(name)\" is not a valid table name",
                                   fix: "use up to 200 letters, digits, '.', '_' and '-' (not starting with '.'), or an absolute file path")
            }
        }
        self.name = name
    }

    package var path: String { name.hasPrefix("/") ? name : "/dev/shm/aspects." + name }
    package var description: String { name }
}
