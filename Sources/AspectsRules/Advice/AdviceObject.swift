#if canImport(Glibc)
import Glibc
#endif
import CAspectsABI
import Foundation
import AspectsCore

/// The shared object a `call` action names, checked the way the preload will use it, without
/// loading it into aspectctl: the file the loader would open, that it is a 64-bit ELF shared
/// object exporting the function, and that it was built with a major version of
/// aspects_advice.h the preload accepts (its `aspects_advice_version`, read from the file).
package enum AdviceObject {
    /// The version of aspects_advice.h this build of the preload runs (its record's version).
    package static let version: UInt32 = 1 << 16

    /// Why an object cannot be called: the message and the fix, for the rule's error.
    package struct Problem: Error, Equatable {
        package var message: String
        package var fix: String
    }

    /// The file the loader would open for `object` (absolute, or a bare name searched for), or
    /// nil when there is none.
    package static func locate(_ object: String) -> String? {
        if object.contains("/") { return FileManager.default.fileExists(atPath: object) ? object : nil }
        for dir in searchDirectories() where FileManager.default.fileExists(atPath: dir + "/" + object) {
            return dir + "/" + object
        }
        return nil
    }

    /// Where dlopen looks for a bare name, as aspectctl can know it: LD_LIBRARY_PATH, the
    /// directories of /etc/ld.so.conf (which the loader's cache indexes), then the defaults.
    /// (An advised process may have another LD_LIBRARY_PATH: a path in the rule is exact.)
    static func searchDirectories() -> [String] {
        var dirs: [String] = []
        if let env = ProcessInfo.processInfo.environment["LD_LIBRARY_PATH"] {
            dirs += env.split(separator: ":").map(String.init).filter { !$0.isEmpty }
        }
        dirs += ldSoConf("/etc/ld.so.conf", depth: 0)
        #if arch(x86_64)
        dirs += ["/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu"]
        #elseif arch(arm64)
        dirs += ["/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu"]
        #endif
        dirs += ["/lib64", "/usr/lib64", "/lib", "/usr/lib"]
        return dirs
    }

    static func ldSoConf(_ path: String, depth: Int) -> [String] {
        guard depth < 4, let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
        var dirs: [String] = []
        for raw in text.split(separator: "\n") {
            let line = raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
            if line.isEmpty { continue }
            if line.hasPrefix("include ") {
                var g = glob_t()
                defer { globfree(&g) }
                let pattern = String(line.dropFirst(8)).trimmingCharacters(in: .whitespaces)
                guard glob(pattern.hasPrefix("/") ? pattern : "/etc/" + pattern, 0, nil, &g) == 0 else { continue }
                for i in 0..<Int(g.gl_pathc) {
                    if let p = g.gl_pathv[i] { dirs += ldSoConf(String(cString: p), depth: depth + 1) }
                }
            } else if line.hasPrefix("/") {
                dirs.append(line)
            }
        }
        return dirs
    }

    /// What is wrong with `object` under the guarded rule (aspects_object_open, the one the
    /// preload applies in every process of root and in tables shared with a group): nil when
    /// no one but this user or root could change it. A user's own processes still load it;
    /// `add` and `check` say this so that it is known before root or a member runs into it.
    package static func trustWarning(_ object: String) -> String? {
        guard object.contains("/") else {
            return "its advice object \(object) is a bare name, searched for where the loader looks: root's processes, and processes attaching a table shared with a group, will not load it (name it by its absolute path)"
        }
        var fd: Int32 = -1
        var at: UInt32 = 0
        let verdict = aspects_object_open(object, geteuid(), 1, &fd, &at)
        if fd >= 0 { Glibc.close(fd) }
        let component = at == 0 ? "/" : String(decoding: object.utf8.prefix(Int(at)), as: UTF8.self)
        let why = "\(component) \(String(cString: aspects_trust_text(verdict)))"
        let who = "root's processes, and processes attaching a table shared with a group, will not load it"
        switch UInt32(verdict) {
        case ASPECTS_TRUST_OWNER.rawValue, ASPECTS_TRUST_MODE.rawValue:
            return "its advice object \(object) could be changed by someone else: \(why); \(who) (keep advice where only you or root can write: `chmod go-w`)"
        case ASPECTS_TRUST_SYMLINK.rawValue, ASPECTS_TRUST_BAD_PATH.rawValue:
            return "its advice object \(object) is named so that \(why); \(who) (name it by its real path: `realpath`)"
        default: return nil  // OK, or missing: the rule's own check says so
        }
    }

    /// Checks that `call` names a function the preload can load and call; the file it found.
    @discardableResult
    package static func check(_ call: Action.AdviceCall) throws(Problem) -> String {
        let written = call.written
        guard let path = locate(call.object) else {
            if call.object.contains("/") {
                let resolved = call.object == written ? "" : " (\"\(written)\", from the rules file's directory)"
                throw Problem(message: "\(call.object)\(resolved) does not exist",
                              fix: "build the advice object first, or correct the path: a relative path starts at the rules file's directory (the current one for --rule)")
            }
            throw Problem(message: "\(call.object) is not found where the loader looks (LD_LIBRARY_PATH, /etc/ld.so.conf, the system's library directories)",
                          fix: "name the object by its path, relative to the rules file (\"./\(call.object):\(call.function)\") or absolute")
        }
        let elf: ELFImports
        do { elf = try ELFImports(path: path) } catch {
            throw Problem(message: "\(path) is not a shared object: \(error)", fix: "build the advice with `cc -shared -fPIC` (or a Swift .dynamic library product)")
        }
        guard elf.isSharedObject, elf.isDynamic else {
            throw Problem(message: "\(path) is not a shared object (an executable or a static object)", fix: "build the advice with `cc -shared -fPIC` (or a Swift .dynamic library product)")
        }
        guard elf.functions.contains(call.function) else {
            let near = ErrorNames.suggestions(for: call.function, in: Array(elf.functions))
            let some = elf.functions.filter { !$0.hasPrefix("_") }.sorted().prefix(8)
            let hint = !near.isEmpty ? "did you mean \(near.joined(separator: " or "))? " : some.isEmpty ? "" : "it exports \(some.joined(separator: ", "))\(elf.functions.count > some.count ? ", …" : ""); "
            throw Problem(message: "\(path) exports no function \(call.function)",
                          fix: hint + "give the function default visibility (extern \"C\" in C++; @_cdecl(\"\(call.function)\") in Swift)")
        }
        guard let built = elf.objectValues["aspects_advice_version"] else {
            throw Problem(message: "\(path) was not built with aspects_advice.h (it has no aspects_advice_version), so its function's interface is unknown",
                          fix: "include <aspects_advice.h> in the advice's source (Swift: depend on the AspectsAdvice product)")
        }
        let major = UInt32(truncatingIfNeeded: built) >> 16, minor = UInt32(truncatingIfNeeded: built) & 0xffff
        guard major == version >> 16 else {
            throw Problem(message: "\(path) was built with aspects_advice.h \(major).\(minor); this aspects runs version \(version >> 16).\(version & 0xffff), whose record it cannot read",
                          fix: "rebuild it with this aspects' aspects_advice.h")
        }
        return path
    }
}
