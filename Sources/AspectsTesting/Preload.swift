#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Where libaspects.so comes from for a test: `$ASPECTS_PRELOAD`, the one `swift build` put
/// beside this package's products, or — in a package that only depends on this one, where
/// SwiftPM does not build it — compiled from this package's C sources with the system's C
/// compiler (`cc`, as the preload needs only libc, libdl and libffi's header), once per
/// version of the sources, into a cache directory.
public enum Preload {
    nonisolated(unsafe) private static var built: String?
    private static let lock = NSLock()

    /// This package's root, where its sources and `swift build`'s products are.
    static let packageRoot: String = {
        // this file: <package>/Sources/AspectsTesting/Preload.swift
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    }()

    /// The path of libaspects.so to preload (built now if it has to be).
    public static func library() throws -> String {
        if let e = ProcessInfo.processInfo.environment["ASPECTS_PRELOAD"], !e.isEmpty { return e }
        lock.lock()
        defer { lock.unlock() }
        if let built { return built }
        let root = packageRoot
        for candidate in [root + "/.build/debug/libaspects.so", root + "/.build/release/libaspects.so"]
            where FileManager.default.fileExists(atPath: candidate) {
            built = candidate
            return candidate
        }
        let path = try compile(root: root)
        built = path
        return path
    }

    /// The preload's folders (one per layer, and stubs/, generated/, include/) and the ABI's.
    static func directories(root: String) throws -> [String] {
        let fm = FileManager.default
        let preload = root + "/Sources/CPreload"
        let folders = try fm.contentsOfDirectory(atPath: preload).sorted().filter {
            var isDirectory: ObjCBool = false
            return fm.fileExists(atPath: preload + "/" + $0, isDirectory: &isDirectory) && isDirectory.boolValue
        }
        return [preload] + folders.map { preload + "/" + $0 } + [root + "/Sources/CAspectsABI", root + "/Sources/CAspectsABI/include"]
    }

    /// Sources of the preload, in a fixed order, and the hash of their text.
    static func sources(root: String) throws -> (files: [String], hash: String) {
        let fm = FileManager.default
        var files: [String] = []
        // Headers count too (the stubs' layout, the gate, the table's ABI): a changed header
        // with unchanged .c files is another library.
        var headers: [String] = []
        for dir in try directories(root: root) {
            for f in ((try? fm.contentsOfDirectory(atPath: dir)) ?? []).sorted() {
                if f.hasSuffix(".c") || f.hasSuffix(".S") { files.append(dir + "/" + f) }
                if f.hasSuffix(".h") { headers.append(dir + "/" + f) }
            }
        }
        var h: UInt64 = 0xcbf29ce484222325
        for f in files + headers {
            for b in (fm.contents(atPath: f) ?? Data()) { h = (h ^ UInt64(b)) &* 0x100000001b3 }
        }
        return (files, String(h, radix: 16))
    }

    /// Compiles each source on its own (as many at once as there are processors: the first
    /// test of a consumer package waits for this), then links them as Package.swift does.
    static func compile(root: String) throws -> String {
        let (files, hash) = try sources(root: root)
        guard !files.isEmpty else { throw PreloadError(message: "no preload sources under \(root)/Sources/CPreload") }
        let cache = (ProcessInfo.processInfo.environment["XDG_CACHE_HOME"] ?? (NSHomeDirectory() + "/.cache")) + "/aspects"
        let out = cache + "/libaspects-\(hash).so"
        if FileManager.default.fileExists(atPath: out) { return out }
        let objects = cache + "/build-\(hash).\(getpid())"
        try FileManager.default.createDirectory(atPath: objects, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: objects) }
        // a file includes another folder's header by its name, as in Package.swift
        let includes = try directories(root: root).flatMap { ["-I", $0] }
        let flags = ["-fPIC", "-O2", "-fvisibility=hidden"] + includes
        let objectFiles = files.indices.map {
            objects + "/\($0)-" + URL(fileURLWithPath: files[$0]).deletingPathExtension().lastPathComponent + ".o"
        }
        let failures = Failures()
        let slots = DispatchSemaphore(value: max(1, ProcessInfo.processInfo.activeProcessorCount))
        DispatchQueue.concurrentPerform(iterations: files.count) { i in
            slots.wait()
            defer { slots.signal() }
            if let message = cc(["-c"] + flags + [files[i], "-o", objectFiles[i]]) { failures.add(message) }
        }
        if let first = failures.first { throw Self.failed(first) }
        let tmp = out + ".\(getpid()).tmp"
        // the version script Package.swift links with: the same exports, nothing else
        let exports = "-Wl,--version-script=" + root + "/Sources/CPreload/generated/exports.map"
        if let message = cc(["-shared"] + objectFiles + ["-ldl", exports, "-o", tmp]) { throw Self.failed(message) }
        guard rename(tmp, out) == 0 else { throw PreloadError(message: "cannot move the built libaspects.so to \(out)") }
        return out
    }

    /// Runs the system's C compiler: nil when it succeeded, else what it said.
    private static func cc(_ arguments: [String]) -> String? {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["cc"] + arguments
        let err = Pipe()
        p.standardError = err
        do { try p.run() } catch { return "cannot start cc: \(error)" }
        let message = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return p.terminationStatus == 0 ? nil : String(decoding: message, as: UTF8.self)
    }

    private static func failed(_ message: String) -> PreloadError {
        PreloadError(message: "building libaspects.so with cc failed (libffi's header, ffi.h, is needed: Debian's libffi-dev):\n" + message)
    }

    /// The compilers' messages, from concurrent compiles.
    private final class Failures: @unchecked Sendable {
        private let lock = NSLock()
        private var messages: [String] = []
        func add(_ message: String) { lock.withLock { messages.append(message) } }
        var first: String? { lock.withLock { messages.first } }
    }

    /// libaspects.so could not be built: the compiler's words, and what is missing.
    public struct PreloadError: Error, CustomStringConvertible {
        /// The compiler's output and what to install or set.
        public var message: String
        /// The message.
        public var description: String { message }
    }
}
