import Foundation
import Testing
import AspectsCore

/// The advice examples of config/examples/advice-c and advice-swift, built as their comments
/// say and run against real programs: curl and python resolving example.invalid to 127.0.0.1,
/// cat reading one file for another, dd's writes recorded by Swift advice.
@Suite(.serialized) struct AdviceExamplesTests {
    static let examples = Paths.root + "/config/examples"

    /// A copy of advice-c in a fresh directory, each .c built beside its rules file, as the
    /// docs/advice.md builds them: the rules name "./lib….so" from their own directory.
    static func builtCExamples() throws -> String {
        let dir = NSTemporaryDirectory() + "advice-c-\(UUID().uuidString)"
        try FileManager.default.copyItem(atPath: examples + "/advice-c", toPath: dir)
        for source in try FileManager.default.contentsOfDirectory(atPath: dir) where source.hasSuffix(".c") {
            let lib = dir + "/lib" + source.dropLast(2) + ".so"
            let r = try Proc.run("/usr/bin/env", ["cc", "-shared", "-fPIC", "-O2", "-Wall", "-Werror", "-I", Paths.root + "/Sources/CPreload/include",
                                                  "-o", lib, dir + "/" + source])
            #expect(r.status == 0, "\(source): \(r)")
        }
        return dir
    }

    /// A loopback HTTP server on a free port that serves `body` (no preload), and its port.
    final class Server {
        let process: TestProcess.Live
        let port: Int
        init(body: String) throws {
            let out = Pipe()
            process = try TestProcess.start(
                "/usr/bin/env",
                [
                    "python3", "-c",
                    """
                    import http.server, sys
                    class H(http.server.BaseHTTPRequestHandler):
                        def do_GET(self):
                            b = \(String(reflecting: body)).encode()
                            self.send_response(200); self.send_header("Content-Length", str(len(b))); self.end_headers(); self.wfile.write(b)
                        def log_message(self, *a): pass
                    s = http.server.HTTPServer(("127.0.0.1", 0), H)
                    print(s.server_address[1], flush=True)
                    s.serve_forever()
                    """,
                ], environment: ["PYTHONUNBUFFERED": "1"], stdout: out)
            var line = Data()
            while true {
                let byte = out.fileHandleForReading.readData(ofLength: 1)
                if byte.isEmpty || byte == Data("\n".utf8) { break }
                line.append(byte)
            }
            port = Int(String(decoding: line, as: UTF8.self)) ?? 0
        }
        // SIGKILL: the server inherits the test thread's signal mask, which may block SIGTERM
        deinit {
            process.signal(SIGKILL)
            process.wait()
        }
    }

    @Test func theRulesFilesAreValidAndTheirObjectsChecked() throws {
        let dir = try Self.builtCExamples()
        defer { TableSegments.removeScratch(dir) }
        let schema = try JSONParser.parse(try String(contentsOfFile: Paths.root + "/config/rule.schema.json", encoding: .utf8))
        for f in ["fake-dns.json", "redirect-open.json"] {
            let text = try String(contentsOfFile: dir + "/" + f, encoding: .utf8)
            #expect(SchemaValidator(root: schema).validate(try JSONParser.parse(text)).isEmpty, "\(f)")
            let r = try Proc.aspectctl(["check", dir + "/" + f])
            #expect(r.status == 0, "\(f): \(r)")
        }
        let swiftRules = try String(contentsOfFile: Self.examples + "/advice-swift/write-sizes.json", encoding: .utf8)
        #expect(SchemaValidator(root: schema).validate(try JSONParser.parse(swiftRules)).isEmpty)
    }

    /// fake_dns.c answers getaddrinfo for example.invalid: python and curl connect to 127.0.0.1;
    /// other names still go to the real resolver (localhost), through aspects_proceed.
    @Test(.tags(.realPrograms)) func aFakeResolverSendsExampleInvalidToLoopback() throws {
        let dir = try Self.builtCExamples()
        defer { TableSegments.removeScratch(dir) }
        let server = try Server(body: "served by loopback")
        #expect(server.port > 0)
        let url = "http://example.invalid:\(server.port)/"
        // without the advice the name does not resolve
        let plain = try Proc.run("/usr/bin/env", ["python3", "-c", "import socket; socket.getaddrinfo('example.invalid', 80)"])
        #expect(plain.status != 0 && plain.stderr.contains("gaierror"), "\(plain)")
        let python = try Proc.aspectctl(["run", "--rules", dir + "/fake-dns.json", "--", "python3", "-c", """
            import socket, urllib.request
            print(urllib.request.urlopen('\(url)').read().decode())
            print(socket.getaddrinfo('localhost', 80, socket.AF_INET)[0][4][0])
            """])
        #expect(python.status == 0 && python.stdout == "served by loopback\n127.0.0.1\n", "\(python)")
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/curl") {
            let curl = try Proc.aspectctl(["run", "--report", "--rules", dir + "/fake-dns.json", "--", "curl", "-sS", "-w", " %{remote_ip}", url])
            #expect(curl.status == 0 && curl.stdout == "served by loopback 127.0.0.1", "\(curl)")
            #expect(curl.stderr.contains("fake-dns  getaddrinfo  instead") && curl.stderr.contains("from libcurl"), "\(curl.stderr)")
        } else {
            Issue.record("curl is not installed (.ci/run installs it): the curl half of this test did not run")
        }
    }

    /// redirect_open.c changes the path argument and proceeds: cat prints another file, for
    /// open and openat alike (a family rule; the advice finds the path by its kind).
    @Test(.tags(.realPrograms)) func anInsteadAdviceProceedsWithAnotherArgument() throws {
        let dir = try Self.builtCExamples()
        defer { TableSegments.removeScratch(dir) }
        try "the test's hostname\n".write(toFile: dir + "/hostname.test", atomically: true, encoding: .utf8)
        let r = try Proc.aspectctl(["run", "--rules", dir + "/redirect-open.json", "--", "cat", "/etc/hostname", "/etc/os-release"],
                                   environment: ["REDIRECT_FROM": "/etc/hostname", "REDIRECT_TO": dir + "/hostname.test"])
        #expect(r.status == 0 && r.stdout.hasPrefix("the test's hostname\n") && r.stdout.contains("NAME="), "the other file as it is: \(r)")
    }

    /// The Swift package builds a .so with `swift build`, and its advice records the size of
    /// every write dd makes. The preload itself still links no Swift.
    @Test func aSwiftAdviceRecordsEveryWrite() throws {
        let scratch = NSTemporaryDirectory() + "advice-swift-\(UUID().uuidString)"
        defer { TableSegments.removeScratch(scratch) }
        let build = try Proc.run("/usr/bin/env", ["swift", "build", "-c", "release", "--package-path", Self.examples + "/advice-swift",
                                                  "--scratch-path", scratch])
        #expect(build.status == 0, "\(build.stdout.suffix(2000))\n\(build.stderr.suffix(2000))")
        TableSegments.removeScratch(Self.examples + "/advice-swift/Package.resolved")
        // by its real path (`release` is a link): root's processes load no object through one
        let library = URL(fileURLWithPath: scratch + "/release/libWriteSizes.so").resolvingSymlinksInPath().path
        #expect(FileManager.default.fileExists(atPath: library))
        let needed = try Proc.run("/usr/bin/env", ["readelf", "-d", library]).stdout
        #expect(needed.contains("libswiftCore.so"), "Swift advice brings the Swift runtime into the advised process")
        #expect(!(try Proc.run("/usr/bin/env", ["readelf", "-d", Paths.library]).stdout.contains("swift")))

        let log = scratch + "/sizes.txt"
        let rule = #"{"id":"write-sizes","symbol":"write","position":"after","action":{"call":"\#(library):record_write_size"}}"#
        let r = try Proc.aspectctl(["run", "--rule", rule, "--", "dd", "if=/dev/zero", "of=\(scratch)/out", "bs=1000", "count=5", "status=none"],
                                   environment: ["WRITE_SIZES": log])
        #expect(r.status == 0, "\(r)")
        // dd writes its output on fd 1 (of= is dup2'd there): five writes of 1000, all whole
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
        #expect(lines == Array(repeating: "1 1000 1000", count: 5), "\(lines)")
    }
}
