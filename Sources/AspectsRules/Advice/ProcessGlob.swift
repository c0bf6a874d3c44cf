import AspectsCore
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A rule's `"process"` glob, decided as the preload decides it (`asp_path_glob` in glob.c):
/// against the path of the executable the process runs — the real one, as /proc/self/exe
/// gives it, links resolved and a script's interpreter in its place — and, for a pattern
/// without '/', against that path's file name only. So `"python3"` never matches a process of
/// /usr/bin/python3 when that is a link to python3.12, and `"*/deploy.sh"` never matches the
/// shell running the script: the checks here say so before the rule is added.
package enum ProcessGlob {
    /// Whether `glob` matches the executable path `image` (fnmatch(3), no flags: `*` crosses '/').
    package static func matches(_ glob: String, image: String) -> Bool {
        let subject = glob.contains("/") ? image : (image as NSString).lastPathComponent
        return fnmatch(glob, subject, 0) == 0
    }

    /// A glob that matches exactly `path`: its metacharacters (`*`, `?`, `[`, `\`) escaped with
    /// `\`, which the preload's matcher (glob.c) and fnmatch(3) both read as "this character".
    package static func literal(_ path: String) -> String {
        var out = ""
        for c in path {
            if "*?[\\".contains(c) { out.append("\\") }
            out.append(c)
        }
        return out
    }

    /// The executable a process started from `path` runs: a script's interpreter (through
    /// `env NAME` too, which execs NAME found on PATH), with links resolved.
    package static func image(of path: String, searchPath: String? = ProcessInfo.processInfo.environment["PATH"]) -> String {
        var program = path
        // the kernel allows a few levels of interpreters; real scripts use one
        for _ in 0..<4 {
            guard var words = shebang(of: program), let first = words.first else { break }
            program = first
            if (first as NSString).lastPathComponent == "env" {
                words.removeFirst()
                // `env -S ...` and options: the first word that is not an option names the program
                if let name = words.first(where: { !$0.hasPrefix("-") }), let found = ProgramPath.find(name, searchPath: searchPath) {
                    program = found
                }
            }
        }
        return realPath(program) ?? program
    }

    /// The words of a `#!` line, or nil for a file that is not a script.
    static func shebang(of path: String) -> [String]? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        let head = (try? handle.read(upToCount: 256)) ?? Data()
        guard head.starts(with: Array("#!".utf8)) else { return nil }
        let line = head.dropFirst(2).prefix { $0 != UInt8(ascii: "\n") }
        let words = String(decoding: line, as: UTF8.self).split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" }).map(String.init)
        return words.isEmpty ? nil : words
    }

    package static func realPath(_ path: String) -> String? {
        guard let r = realpath(path, nil) else { return nil }
        defer { free(r) }
        return String(cString: r)
    }

    /// A program that could be started: its path as found, and that path with links resolved
    /// (its image unless it is a script: `image(of:)` reads that only where it matters).
    package struct Program: Sendable, Equatable {
        package var path: String
        package var real: String
    }

    /// The programs one can start without knowing where they are: the executables on PATH and
    /// in `directory` (the current one: `./server`), and for an absolute pattern the files it
    /// names (glob(3), where `*` stays within a directory).
    package static func knownPrograms(for glob: String, searchPath: String? = ProcessInfo.processInfo.environment["PATH"],
                                     directory: String = FileManager.default.currentDirectoryPath) -> [Program] {
        var seen = Set<String>()
        var paths: [String] = []
        func add(_ p: String) { if seen.insert(p).inserted, ProgramPath.isProgram(p) { paths.append(p) } }
        for dir in (searchPath ?? "/usr/bin:/bin").split(separator: ":").map(String.init) + [directory] where dir.hasPrefix("/") {
            for name in (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? [] { add(dir + "/" + name) }
        }
        if glob.hasPrefix("/") {
            var g = glob_t()
            if Glibc.glob(glob, 0, nil, &g) == 0 {
                for i in 0..<Int(g.gl_pathc) { if let p = g.gl_pathv[i] { add(String(cString: p)) } }
            }
            globfree(&g)
        }
        return paths.map { Program(path: $0, real: realPath($0) ?? $0) }
    }

    /// What the checks say about a glob and the programs one could start.
    package enum Verdict: Sendable, Equatable {
        /// A program runs as an executable the glob matches.
        case matches
        /// The glob matches a program's path, but that program runs as another executable (a
        /// link, a script's interpreter), whose path the preload matches.
        case runsAsAnother(path: String, image: String)
        /// The glob matches no program at all.
        case matchesNothing
    }

    /// The glob against `programs`: whether any runs as an executable it matches.
    package static func verdict(_ glob: String, programs: [Program], searchPath: String? = ProcessInfo.processInfo.environment["PATH"]) -> Verdict {
        // a script's image is its interpreter: read only for the programs whose real path matches
        if programs.contains(where: { matches(glob, image: $0.real) && matches(glob, image: image(of: $0.path, searchPath: searchPath)) }) { return .matches }
        if let named = programs.first(where: { matches(glob, image: $0.path) || matches(glob, image: $0.real) }) {
            return .runsAsAnother(path: named.path, image: image(of: named.path, searchPath: searchPath))
        }
        return .matchesNothing
    }
}
