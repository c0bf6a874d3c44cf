import Foundation
import Testing

/// scripts/package.sh: a tarball that installs and runs without a Swift toolchain — aspectctl
/// needs no Swift library, finds libaspects.so in the installed layout, and injects a fault
/// into cat with nothing of the toolchain in its environment.
@Suite(.serialized) struct PackageTests {
    @Test func theTarballInstallsAndInjectsAFaultWithoutSwift() throws {
        let dir = NSTemporaryDirectory() + "aspects-package-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { TableSegments.removeScratch(dir) }
        let made = try Proc.run("/bin/bash", [Paths.root + "/scripts/package.sh", dir + "/dist"])
        #expect(made.status == 0, "\(made.stderr.suffix(2000))")
        let tarball = made.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(tarball.hasSuffix(".tar.gz") && FileManager.default.fileExists(atPath: tarball), "\(made.stdout)")
        #expect(try Proc.run("/bin/tar", ["-C", dir, "-xzf", tarball]).status == 0)
        let unpacked = dir + "/" + ((tarball as NSString).lastPathComponent as NSString).deletingPathExtension.replacingOccurrences(of: ".tar", with: "")
        let prefix = dir + "/prefix"
        let install = try Proc.run("/bin/sh", [unpacked + "/install.sh", "--prefix", prefix])
        #expect(install.status == 0, "\(install)")

        let ldd = try Proc.run("/usr/bin/ldd", [prefix + "/bin/aspectctl"])
        #expect(ldd.status == 0 && !ldd.stdout.contains("swift"), "no Swift library: \(ldd.stdout)")
        // a clean environment: no toolchain on PATH, no library path
        let run = try Proc.run("/usr/bin/env", ["-i", "PATH=/usr/bin:/bin", prefix + "/bin/aspectctl", "run",
                                                "--inject", "open(/etc/hostname):error=ENOENT", "--", "cat", "/etc/hostname"])
        #expect(run.status == 1 && run.stderr.contains("/etc/hostname: No such file or directory"), "\(run)")

        for file in ["share/man/man1/aspectctl.1", "share/man/man5/aspects-rules.5", "share/bash-completion/completions/aspectctl", "share/zsh/site-functions/_aspectctl",
                     "share/fish/vendor_completions.d/aspectctl.fish", "include/aspects/aspects_abi.h", "include/aspects/aspects_advice.h", "share/aspects/examples/advice-c/fake_dns.c", "share/aspects/schemas/rule.schema.json",
                     "share/aspects/examples/flaky-disk.json", "lib/libaspects.so",
                     "share/aspects/README.md", "share/aspects/docs/rules.md", "share/aspects/docs/explore.md"] {
            let size = (try? FileManager.default.attributesOfItem(atPath: prefix + "/" + file)[.size] as? NSNumber)?.intValue ?? 0
            #expect(size > 0, "\(file) is in the installed tree")
        }
        // the committed pages, as they are (ManPageTests keeps those fresh and warning-free)
        for page in ["aspectctl.1", "aspects-rules.5"] {
            let installed = try? String(contentsOfFile: prefix + "/share/man/man" + page.suffix(1) + "/" + page, encoding: .utf8)
            #expect(installed == (try String(contentsOfFile: Paths.root + "/docs/man/" + page, encoding: .utf8)), "\(page) is installed as committed")
        }
    }
}
