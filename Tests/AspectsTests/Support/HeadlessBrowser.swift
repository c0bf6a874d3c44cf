import Foundation

/// A real browser engine, headless: Debian's chromium (`.ci/run` installs it). It loads a page
/// from a file, runs its script, and gives back the DOM as it then is, with every message the
/// page wrote to its console (script errors among them).
enum HeadlessBrowser {
    static let chromium: String? = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].first { FileManager.default.isExecutableFile(atPath: $0) }

    struct Page {
        var dom: String
        /// Console lines ("Uncaught ReferenceError: …"): a page that works writes none.
        var console: [String]
    }

    static func load(_ file: String, fragment: String? = nil) throws -> Page {
        guard let chromium else { throw Fixture.FixtureError(message: "chromium is not installed") }
        let profile = NSTemporaryDirectory() + "aspects-chromium-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: profile) }
        let url = "file://" + file + (fragment.map { "#" + $0 } ?? "")
        // --no-sandbox: tests run as root here; a private profile: tests run in parallel.
        let r = try Proc.run(chromium, ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--user-data-dir=" + profile,
                                        "--enable-logging=stderr", "--v=0", "--dump-dom", url])
        guard r.status == 0 else { throw Fixture.FixtureError(message: "chromium failed: \(r)") }
        let console = r.stderr.split(separator: "\n").filter { $0.contains(":CONSOLE") }.map(String.init)
        return Page(dom: r.stdout, console: console)
    }
}
