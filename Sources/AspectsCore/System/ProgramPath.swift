#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Where a command's program is, as a shell finds it: a name with a slash is a path, any other
/// name the first executable of that name on PATH.
package enum ProgramPath {
    package static func resolve(_ name: String) throws(AspectsError) -> String {
        if name.contains("/") { return name }
        for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let p = "\(dir)/\(name)"
            if access(p, X_OK) == 0 { return p }
        }
        throw AspectsError(.noInput, field: "command", "\(name) is not found on PATH", fix: "give its path")
    }
}
