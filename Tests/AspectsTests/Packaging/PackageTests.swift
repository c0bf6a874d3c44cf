import Foundation
import Testing

/// scripts/package.sh: a tarball that installs and runs without a Swift toolchain — aspectctl
/// needs no Swift library, finds libaspects.so in the installed layout, and injects a fault
/// into cat with nothing of the toolchain in its environment.
@Suite(.serialized) struct PackageTests {
    @Test(.tags(.slow, .realPrograms)) func theTarballInstallsAndInjectsAFaultWithoutSwift() throws {
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

    /// The aarch64 release on this x86-64 machine: its aspectctl needs a Swift SDK for
    /// cross-compilation. Without one named, package.sh stops before building anything (no
    /// output directory, no minutes of build) and says which SDKs are installed and how to get
    /// one; an architecture the preload does not run on is refused by name.
    @Test func anAarch64ReleaseNeedsASwiftSDKAndSaysSoBeforeBuilding() throws {
        let dir = NSTemporaryDirectory() + "aspects-package-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #if arch(x86_64)
        let cross = try Proc.run("/bin/bash", [Paths.root + "/scripts/package.sh", "--arch", "aarch64", dir])
        #expect(cross.status == 64 && cross.stderr.contains("--swift-sdk ID") && cross.stderr.contains("swift sdk list")
                && cross.stderr.contains("aarch64-swift-linux-musl"), "\(cross)")
        #expect(!FileManager.default.fileExists(atPath: dir), "nothing is made before the refusal")
        #endif
        let mips = try Proc.run("/bin/bash", [Paths.root + "/scripts/package.sh", "--arch", "mips", dir])
        #expect(mips.status == 64 && mips.stderr.contains("--arch mips: the preload runs on x86_64 and aarch64"), "\(mips)")
        let typo = try Proc.run("/bin/bash", [Paths.root + "/scripts/package.sh", "--ach", "aarch64", dir])
        #expect(typo.status == 64 && typo.stderr.contains("unknown option --ach"), "\(typo)")
    }
}
