import Foundation
import Testing
import CAspectsABI
import AspectsRules
import AspectsTable

/// Where the package and its build products are, seen from the test runner.
enum Paths {
    /// The package root (this file is Tests/AspectsTests/Support/Harness.swift).
    static let root: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<4 { url.deleteLastPathComponent() }
        return url.path
    }()

    /// The build directory holding the test runner, libaspects.so and aspectctl.
    static let build: String = {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var dir = URL(fileURLWithPath: exe).deletingLastPathComponent()
        // On Linux the runner is <build>/<package>PackageTests.xctest (a file); be robust to a bundle.
        while !FileManager.default.fileExists(atPath: dir.appendingPathComponent("libaspects.so").path), dir.path != "/" {
            dir.deleteLastPathComponent()
        }
        return dir.path
    }()

    static var library: String { build + "/libaspects.so" }
    static var aspectctl: String { build + "/aspectctl" }
    /// Tests/Fixtures: one folder per component, as Tests/AspectsTests has (`Fixture.path`).
    static var fixtures: String { root + "/Tests/Fixtures" }

    /// The preload's layer folders (base.h names the layers) with their files.
    static let preloadLayers = ["os", "rules", "originals", "events", "dispatch", "install"]

    /// -I flags for a fixture that includes the preload's headers by name, as its files do
    /// (Package.swift: one search path per layer folder, and the root).
    static var preloadIncludes: [String] {
        (preloadLayers.map { root + "/Sources/CPreload/" + $0 } + [root + "/Sources/CPreload", root + "/Sources/CAspectsABI/include"])
            .flatMap { ["-I", $0] }
    }
}

/// The result of running a process.
struct Outcome: CustomStringConvertible {
    var status: Int32
    var stdout: String
    var stderr: String
    var description: String { "status \(status)\nstdout:\n\(stdout)\nstderr:\n\(stderr)" }
}

enum Proc {
    /// Runs a program to completion (TestProcess: the product's Subprocess, with a time limit
    /// past which the test fails). `environment` entries are added to (or, with nil, removed
    /// from) the runner's environment; LD_PRELOAD and ASPECTS_* are never inherited.
    static func run(_ path: String, _ args: [String] = [], environment: [String: String?] = [:], stdin: String? = nil,
                    directory: String? = nil, timeout: Double = TestProcess.defaultTimeout) throws -> Outcome {
        let r = try TestProcess.run(path, args, environment: environment, stdin: stdin.map { Data($0.utf8) }, directory: directory,
                                    timeout: timeout)
        if r.timedOut { throw TestProcess.TimedOut(command: [path] + args, limit: timeout, run: r) }
        return Outcome(status: r.status, stdout: String(decoding: r.stdout, as: UTF8.self), stderr: String(decoding: r.stderr, as: UTF8.self))
    }

    /// Starts a program without waiting for it (its output is discarded), under TestProcess's
    /// limit; `wait()` it.
    static func start(_ path: String, _ args: [String]) throws -> TestProcess.Live {
        try TestProcess.start(path, args, stdout: FileHandle.nullDevice, stderr: FileHandle.nullDevice)
    }

    /// Runs aspectctl with arguments.
    static func aspectctl(_ args: [String], environment: [String: String?] = [:]) throws -> Outcome {
        try run(Paths.aspectctl, args, environment: environment)
    }

    /// Starts aspectctl without waiting, for tests that need its standard streams or signal
    /// dispositions as a shell would set them: `fds` maps each of 0–2 to a descriptor to
    /// duplicate, or nil to leave it closed (absent: /dev/null); `defaultSignals` are reset to
    /// their default disposition in the child. The caller reaps it (waitpid on its `pid`), then
    /// ends its watch (`finish()`): TestProcess's limit holds until then.
    static func spawnAspectctl(
        _ args: [String], environment: [String: String], fds: [Int32: Int32?] = [:],
        defaultSignals: [Int32] = []
    ) throws -> (pid: pid_t, watch: TestProcess.Watch) {
        let token = UUID().uuidString
        let argv = ([Paths.aspectctl] + args).map { strdup($0) } + [nil]
        let envp = environment.merging([TestProcess.tokenVariable: token]) { $1 }.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { argv.forEach { free($0) }; envp.forEach { free($0) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for fd: Int32 in 0...2 {
            switch fds[fd] {
            case .none: posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0)
            case .some(.none): posix_spawn_file_actions_addclose(&actions, fd)
            case .some(.some(let given)): posix_spawn_file_actions_adddup2(&actions, given, fd)
            }
        }
        var attrs = posix_spawnattr_t()
        posix_spawnattr_init(&attrs)
        defer { posix_spawnattr_destroy(&attrs) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in defaultSignals { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attrs, &defaults)
        posix_spawnattr_setflags(&attrs, Int16(POSIX_SPAWN_SETSIGDEF))
        var pid: pid_t = 0
        guard posix_spawn(&pid, Paths.aspectctl, &actions, &attrs, argv, envp) == 0 else { throw Fixture.FixtureError(message: "spawn failed") }
        return (pid, TestProcess.watch(pid: pid, command: [Paths.aspectctl] + args, token: token))
    }

    /// Environment that preloads libaspects.so with a table.
    static func preload(table: String?) -> [String: String?] {
        var env: [String: String?] = ["LD_PRELOAD": Paths.library]
        if let table { env["ASPECTS_TABLE"] = table }
        return env
    }
}

/// `aspectctl gc` without a pattern removes every leftover segment of the user's — also the one
/// a test has just made on purpose (a create killed before its name) and is about to look for.
/// Tests that run such a gc, and those that look for their own leftover, take turns here (the
/// suites run in parallel in one process).
enum SegmentGC {
    private static let lock = NSLock()
    static func serialized<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }
}

/// C fixtures, compiled with the system compiler on first use (per source and flags) into
/// the build directory, so that link modes and fortify levels can vary per test.
enum Fixture {
    private static let lock = NSLock()

    /// The fixture file named `file` (`tree.c`), in whichever component folder holds it; a
    /// name with a folder (`generated/catalog_calls.c`) is taken as it is.
    static func path(_ file: String) -> String {
        if file.contains("/") { return Paths.fixtures + "/" + file }
        return Paths.fixtures + "/" + (FixtureIndex.folder[file].map { $0 + "/" } ?? "") + file
    }

    static func build(_ name: String, flags: [String] = [], extraSources: [String] = []) throws -> String {
        let source = path(name + ".c")
        let key = cacheKey([name] + flags + extraSources, sources: [source] + extraSources)
        let out = Paths.build + "/fixtures/\((name as NSString).lastPathComponent)-\(key)"
        return try compile(to: out) { tmp in ["cc", "-o", tmp, source] + extraSources + flags + ["-lpthread"] }
    }

    /// The same fixture cross-built for aarch64 (scripts/build-aarch64.sh: SwiftPM's clang,
    /// Debian's cross C library), to run under qemu-user (Aarch64Tests).
    static func buildAarch64(_ name: String, flags: [String] = [], extraSources: [String] = []) throws -> String {
        let source = path(name + ".c")
        let out = Paths.build + "/fixtures-aarch64/\(name)-\(cacheKey([name] + flags + extraSources, sources: [source] + extraSources))"
        return try compile(to: out) { tmp in [Paths.root + "/scripts/build-aarch64.sh", "fixture", source, tmp] + extraSources + flags }
    }

    /// A shared library lib<soname>.so built from the fixture <source>.c, in a directory of
    /// its own (returned) so programs can link it with -L and find it with -rpath.
    static func library(_ source: String, soname: String, flags: [String] = []) throws -> String {
        let path = Self.path(source + ".c")
        let dir = Paths.build + "/fixtures/lib-\(soname)-\(cacheKey([source, soname] + flags, sources: [path]))"
        _ = try compile(to: dir + "/lib\(soname).so") { tmp in ["cc", "-shared", "-fPIC", "-o", tmp, path] + flags }
        return dir
    }

    /// The same library cross-built for aarch64 (its directory, as `library` returns).
    static func libraryAarch64(_ source: String, soname: String, flags: [String] = []) throws -> String {
        let path = Self.path(source + ".c")
        let dir = Paths.build + "/fixtures-aarch64/lib-\(soname)-\(cacheKey([source, soname] + flags, sources: [path]))"
        _ = try compile(to: dir + "/lib\(soname).so") { tmp in [Paths.root + "/scripts/build-aarch64.sh", "fixture", path, tmp, "-shared", "-fPIC"] + flags }
        return dir
    }

    /// Keyed by every input: the arguments and the text of each source file.
    private static func cacheKey(_ parts: [String], sources: [String]) -> String {
        let texts = sources.map { (try? String(contentsOfFile: $0, encoding: .utf8)) ?? "" }
        return String(FNV1a.hash((parts + texts).joined(separator: "\u{1}")), radix: 16)
    }

    /// Runs the compiler once per output (atomically renamed into place) and reuses it after.
    private static func compile(to out: String, command: (String) -> [String]) throws -> String {
        lock.lock()
        defer { lock.unlock() }
        if FileManager.default.fileExists(atPath: out) { return out }
        try FileManager.default.createDirectory(atPath: (out as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let tmp = out + ".tmp\(getpid())"
        let r = try Proc.run("/usr/bin/env", command(tmp))
        guard r.status == 0 else { throw FixtureError(message: "\(command(tmp).joined(separator: " ")) failed:\n\(r.stderr)") }
        try FileManager.default.moveItem(atPath: tmp, toPath: out)
        return out
    }

    struct FixtureError: Error, CustomStringConvertible { var message: String; var description: String { message } }
}

/// A table in a private temporary directory (the path form of table names), destroyed at the end.
final class ScratchTable {
    let directory: String
    let name: String
    let table: AdviceTable
    /// Its segment, known from the start: a test may truncate or rewrite the file.
    let segment: aspects_table_anchor?

    init(rules: Int = 64, events: Int = 256, stats: Int = 1024) throws {
        directory = NSTemporaryDirectory() + "aspects-test-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        name = directory + "/table"
        table = try AdviceTable.create(try TableName(name), ruleCapacity: rules, eventCapacity: events, statCapacity: stats)
        segment = TableSegments.anchor(name)
    }

    /// Decodes, compiles and adds rules; returns their ids.
    @discardableResult
    func add(_ json: String) throws -> [String] {
        try table.add(try RuleCompiler().compile(try RuleDecoder(source: "test").decode(json)))
    }

    /// The table goes with its directory, and its segment (which outlives the file) even when
    /// the test truncated the file.
    deinit {
        TableSegments.removeScratch(directory)
        if let segment { TableSegments.removeMadeHere(segment) }
    }
}

/// A long-running fixture under the preload that answers one line per line it is sent, so a
/// test can change the table between its calls (TestProcess.start: under its limit).
final class LiveProcess {
    private let process: TestProcess.Live
    private let input = Pipe(), output = Pipe()

    init(_ bin: String, _ args: [String], table: String) throws {
        process = try TestProcess.start(
            bin, args, environment: ["LD_PRELOAD": Paths.library, "ASPECTS_TABLE": table],
            stdin: input, stdout: output)
    }

    /// Sends one line and returns the line the program answers.
    func call() -> String { send("x") }

    /// Sends `command` as one line and returns the line the program answers ("" at its end).
    func send(_ command: String) -> String {
        input.fileHandleForWriting.write(Data((command + "\n").utf8))
        var line = Data()
        while true {
            let byte = output.fileHandleForReading.readData(ofLength: 1)
            if byte.isEmpty || byte == Data("\n".utf8) { break }
            line.append(byte)
        }
        return String(decoding: line, as: UTF8.self)
    }

    /// Closes its input and waits for it; returns its exit status (128+N: signal N).
    func finish() throws -> Int32 {
        try input.fileHandleForWriting.close()
        return process.wait()
    }

    deinit { process.signal() }
}
