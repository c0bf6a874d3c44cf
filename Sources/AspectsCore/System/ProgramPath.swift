#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Where a command's program is, as `execvp` finds it: a name with a slash is a path, any other
/// name the first regular, executable file of that name in PATH's absolute directories (a
/// relative entry would name another file from every working directory).
package enum ProgramPath {
    /// The program `name` names, or nil when PATH has none.
    package static func find(_ name: String, searchPath: String? = ProcessInfo.processInfo.environment["PATH"]) -> String? {
        if name.contains("/") { return name }
        for dir in (searchPath ?? "/usr/bin:/bin").split(separator: ":") where dir.hasPrefix("/") {
            let p = "\(dir)/\(name)"
            if isProgram(p) { return p }
        }
        return nil
    }

    /// The program `name` names; an error naming it when PATH has none.
    package static func resolve(_ name: String) throws(AspectsError) -> String {
        guard let path = find(name) else {
            throw AspectsError(.noInput, field: "command", "\(name) is not found on PATH", fix: "give its path")
        }
        return path
    }

    /// A regular file this process may execute.
    package static func isProgram(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG && access(path, X_OK) == 0
    }
}
