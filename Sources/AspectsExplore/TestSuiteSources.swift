import Foundation
import AspectsCore

/// Where a suite's tests come from: a file (`--tests`), a command's output (`--tests-from`,
/// pytest's collection recognised), a CMake build directory (`--ctest`).
extension TestSuite {
    /// The tests listed in `path`.
    package static func load(file path: String) throws(AspectsError) -> [SuiteTest] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw AspectsError(.noInput, field: "--tests", "cannot read \(path)", fix: "give a file with one test command per line")
        }
        return try parse(String(decoding: data, as: UTF8.self), source: path)
    }

    /// The tests `command` (a shell command line, run by /bin/sh) prints: pytest's collected
    /// ids when it is a `pytest --collect-only` (each run as `pytest -q ID`), else a list.
    package static func load(from command: String) throws(AspectsError) -> [SuiteTest] {
        let r = try Subprocess.run("/bin/sh", ["-c", command])
        let output = String(decoding: r.stdout, as: UTF8.self)
        guard r.status == 0 else {
            throw AspectsError(
                .invalidValue, field: "--tests-from",
                "`\(command)` exited with status \(r.status): \(String(decoding: r.stderr, as: UTF8.self).suffix(300))",
                fix: "give a command that prints the tests, one command per line, and exits 0")
        }
        let words = (try? words(of: command, at: "--tests-from")) ?? []
        if isPytestCollection(words) { return try pytest(collected: output, command: words, source: "--tests-from") }
        return try parse(output, source: "the output of `\(command)`")
    }

    /// The tests of the CMake build directory `directory`, as `ctest --show-only=json-v1` there lists them.
    package static func load(ctest directory: String) throws(AspectsError) -> [SuiteTest] {
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDir), isDir.boolValue else {
            throw AspectsError(
                .noInput, field: "--ctest", "\(directory) is not a directory",
                fix: "give the CMake build directory where ctest runs the tests")
        }
        let r: Subprocess.Result
        do {
            r = try Subprocess.run("/bin/sh", ["-c", "cd \"$1\" && exec ctest --show-only=json-v1", "sh", directory])
        } catch {
            throw AspectsError(.system, field: "--ctest", "cannot run ctest: \(error.message)", fix: "install CMake (it brings ctest)")
        }
        guard r.status == 0 else {
            throw AspectsError(
                .invalidValue, field: "--ctest",
                "`ctest --show-only=json-v1` in \(directory) exited with status \(r.status): \(String(decoding: r.stderr, as: UTF8.self).suffix(300))",
                fix: "give a configured CMake build directory (cmake -S SRC -B DIR), with CMake 3.14 or later")
        }
        return try ctest(json: String(decoding: r.stdout, as: UTF8.self), source: "ctest --show-only=json-v1 in \(directory)")
    }
}
