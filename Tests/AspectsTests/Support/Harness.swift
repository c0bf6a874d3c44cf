import Foundation
import Testing
@testable import AspectConfig

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
    static var fixtures: String { root + "/Tests/Fixtures" }
}

/// The result of running a process.
struct Outcome: CustomStringConvertible {
    var status: Int32
    var stdout: String
    var stderr: String
    var description: String { "status \(status)\nstdout:\n\(stdout)\nstderr:\n\(stderr)" }
}

enum Proc {
    /// Runs a program to completion. `environment` entries are added to (or, with nil, removed
    /// from) the runner's environment; LD_PRELOAD and ASPECTS_* are never inherited.
    static func run(_ path: String, _ args: [String] = [], environment: [String: String?] = [:], stdin: String? = nil,
                    directory: String? = nil) throws -> Outcome {
        let p = Process()
        if let directory { p.currentDirectoryURL = URL(fileURLWithPath: directory) }
        p.executableURL = URL(fileURLWithPath: path)
        p.arguments = args
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("ASPECTS_") && $0.key != "LD_PRELOAD" }
        for (k, v) in environment { env[k] = v }
        p.environment = env
        let out = Pipe(), err = Pipe(), input = Pipe()
        p.standardOutput = out
        p.standardError = err
        p.standardInput = input
        try p.run()
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try input.fileHandleForWriting.close()
        // Read both pipes before waiting, so a chatty child never blocks on a full pipe.
        let group = DispatchGroup()
        nonisolated(unsafe) var outData = Data(), errData = Data()
        group.enter()
        DispatchQueue.global().async { outData = out.fileHandleForReading.readDataToEndOfFile(); group.leave() }
        errData = err.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        p.waitUntilExit()
        let status = p.terminationReason == .uncaughtSignal ? 128 + p.terminationStatus : p.terminationStatus
        return Outcome(status: status, stdout: String(decoding: outData, as: UTF8.self), stderr: String(decoding: errData, as: UTF8.self))
    }

    /// Runs aspectctl with arguments.
    static func aspectctl(_ args: [String], environment: [String: String?] = [:]) throws -> Outcome {
        try run(Paths.aspectctl, args, environment: environment)
    }

    /// Environment that preloads libaspects.so with a table.
    static func preload(table: String?) -> [String: String?] {
        var env: [String: String?] = ["LD_PRELOAD": Paths.library]
        if let table { env["ASPECTS_TABLE"] = table }
        return env
    }
}

/// C fixtures, compiled with the system compiler on first use (per source and flags) into
/// the build directory, so that link modes and fortify levels can vary per test.
enum Fixture {
    private static let lock = NSLock()

    static func build(_ name: String, flags: [String] = [], extraSources: [String] = []) throws -> String {
        let source = Paths.fixtures + "/\(name).c"
        // Keyed by every input: the flags and the text of each source file.
        let inputs = [source] + extraSources
        let key = FNV1a.hash(([name] + flags + extraSources).joined(separator: "\u{1}")
                             + inputs.map { (try? String(contentsOfFile: $0, encoding: .utf8)) ?? "" }.joined(separator: "\u{1}"))
        let dir = Paths.build + "/fixtures"
        let out = dir + "/\((name as NSString).lastPathComponent)-\(String(key, radix: 16))"
        lock.lock()
        defer { lock.unlock() }
        if FileManager.default.isExecutableFile(atPath: out) { return out }
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let tmp = out + ".tmp\(getpid())"
        let r = try Proc.run("/usr/bin/env", ["cc", "-o", tmp, source] + extraSources + flags + ["-lpthread"])
        guard r.status == 0 else { throw FixtureError(message: "cc \(name) failed:\n\(r.stderr)") }
        try FileManager.default.moveItem(atPath: tmp, toPath: out)
        return out
    }

    /// A shared library lib<soname>.so built from Tests/Fixtures/<source>.c, in a directory of
    /// its own (returned) so programs can link it with -L and find it with -rpath.
    static func library(_ source: String, soname: String, flags: [String] = []) throws -> String {
        let path = Paths.fixtures + "/\(source).c"
        let key = FNV1a.hash(([source, soname] + flags).joined(separator: "\u{1}") + ((try? String(contentsOfFile: path, encoding: .utf8)) ?? ""))
        let dir = Paths.build + "/fixtures/lib-\(soname)-\(String(key, radix: 16))"
        let out = dir + "/lib\(soname).so"
        lock.lock()
        defer { lock.unlock() }
        if FileManager.default.fileExists(atPath: out) { return dir }
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let tmp = out + ".tmp\(getpid())"
        let r = try Proc.run("/usr/bin/env", ["cc", "-shared", "-fPIC", "-o", tmp, path] + flags)
        guard r.status == 0 else { throw FixtureError(message: "cc \(source) failed:\n\(r.stderr)") }
        try FileManager.default.moveItem(atPath: tmp, toPath: out)
        return dir
    }

    struct FixtureError: Error, CustomStringConvertible { var message: String; var description: String { message } }
}

/// A table in a private temporary directory (the path form of table names), destroyed at the end.
final class ScratchTable {
    let directory: String
    let name: String
    let table: AdviceTable

    init(rules: Int = 64, events: Int = 256, stats: Int = 1024) throws {
        directory = NSTemporaryDirectory() + "aspects-test-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        name = directory + "/table"
        table = try AdviceTable.create(try TableName(name), ruleCapacity: rules, eventCapacity: events, statCapacity: stats)
    }

    /// Decodes, compiles and adds rules; returns their ids.
    @discardableResult
    func add(_ json: String) throws -> [String] {
        try table.add(try RuleCompiler().compile(try RuleDecoder(source: "test").decode(json)))
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }
}
