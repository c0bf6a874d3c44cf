import Foundation
import Testing

/// scripts/package.sh --deb: the amd64 (or this machine's) Debian package, built from the same
/// static release tree as the tarball — these tests are one serialized suite with the tarball's,
/// so that tree is built once, by whichever runs first. The package's fields and files, lintian
/// where it is installed, then `apt-get install` on this machine, the README's first taste with
/// the installed aspectctl (the preload found in the multiarch directory), `man aspectctl`, the
/// pytest plugin's package where the system's pytest is (a test using its fixture), and
/// `dpkg -r`, after which nothing of the packages is left.
extension PackageTests {
    /// The package's name and this machine's Debian architecture and multiarch directory.
    struct Debian {
        var arch: String
        var multiarch: String

        static func here() throws -> Debian {
            let arch = try Proc.run("/usr/bin/dpkg", ["--print-architecture"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            return Debian(arch: arch, multiarch: try PreloadLookupTests.debianMultiarch())
        }

        /// Installing needs root and Debian's tools; an aspects installed already is left alone.
        static var canInstall: Bool {
            getuid() == 0
                && ["/usr/bin/apt-get", "/usr/bin/dpkg-deb", "/usr/bin/dpkg-shlibdeps", "/usr/bin/man"].allSatisfy {
                    FileManager.default.isExecutableFile(atPath: $0)
                }
        }
        /// dpkg's state of a package (installed, unpacked, half-configured, config-files …),
        /// nil when dpkg knows none.
        static func state(_ package: String) -> String? {
            guard let r = try? Proc.run("/usr/bin/dpkg-query", ["-W", "-f=${db:Status-Status}", package]), r.status == 0,
                !r.stdout.isEmpty, r.stdout != "not-installed"
            else { return nil }
            return r.stdout
        }
        static let ours = ["aspects", "python3-aspects-pytest"]
    }

    @Test(
        .tags(.slow, .realPrograms),
        .requires(Debian.canInstall, "needs root, apt-get, dpkg-dev and man-db (the Debian package's install test)"),
        .requires(
            Debian.ours.allSatisfy { Debian.state($0) == nil },
            "aspects is installed as a Debian package here: the package test leaves it alone"))
    func theDebianPackageInstallsRunsTheFirstTasteAndRemovesCleanly() throws {
        let dir = NSTemporaryDirectory() + "aspects-deb-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { TableSegments.removeScratch(dir) }
        let debian = try Debian.here()
        // xz's fastest level (dpkg-deb reads it from the environment): a quarter of the release's
        // compression time, for a package 20% larger; everything else as released.
        let made = try Proc.run(
            "/bin/bash", [Paths.root + "/scripts/package.sh", "--deb", dir + "/dist"], environment: ["DPKG_DEB_COMPRESSOR_LEVEL": "1"])
        try #require(made.status == 0, "\(made.stderr.suffix(3000))")
        let packages = made.stdout.split(separator: "\n").map(String.init)
        let version = try Proc.aspectctl(["--version"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(
            packages.map { ($0 as NSString).lastPathComponent } == [
                "aspects_\(version)_\(debian.arch).deb", "python3-aspects-pytest_\(version)_all.deb",
            ],
            "\(made.stdout)")
        let deb = try #require(packages.first)
        let pluginDeb = try #require(packages.last)
        let fields = try Self.controlFields(deb)
        #expect(fields["Package"] == "aspects" && fields["Version"] == version && fields["Architecture"] == debian.arch, "\(fields)")
        #expect(
            fields["Section"] == "devel" && fields["Priority"] == "optional" && fields["Maintainer"]?.contains("<") == true, "\(fields)")
        // what the static aspectctl and the preload need (dpkg-shlibdeps), and the dlopened libffi
        let depends = (fields["Depends"] ?? "").split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespaces).split(separator: " ").first.map(String.init) ?? ""
        }
        #expect(Set(depends).isSuperset(of: ["libc6", "libffi8", "libstdc++6", "libgcc-s1"]), "\(fields)")

        let files = try Self.contents(deb)
        let pluginFiles = try Self.contents(pluginDeb)
        let preload = "/usr/lib/\(debian.multiarch)/aspects/libaspects.so"
        for file in [
            "/usr/bin/aspectctl", preload, "/usr/include/aspects/aspects_abi.h", "/usr/include/aspects/aspects_advice.h",
            "/usr/share/man/man1/aspectctl.1.gz", "/usr/share/man/man5/aspects-rules.5.gz",
            "/usr/share/bash-completion/completions/aspectctl", "/usr/share/zsh/vendor-completions/_aspectctl",
            "/usr/share/fish/vendor_completions.d/aspectctl.fish", "/usr/share/aspects/schemas/rule.schema.json",
            "/usr/share/aspects/examples/flaky-disk.json", "/usr/share/aspects/examples/advice-c/fake_dns.c",
            "/usr/share/doc/aspects/copyright", "/usr/share/doc/aspects/changelog.gz", "/usr/share/doc/aspects/README.md",
            "/usr/share/doc/aspects/docs/install.md",
        ] {
            #expect(files.contains(file), "\(file) is in aspects")
        }
        let site = "/usr/lib/python3/dist-packages"
        for file in [
            site + "/aspects_pytest/plugin.py", site + "/aspects_pytest/__init__.py", "/usr/share/doc/python3-aspects-pytest/copyright",
        ] {
            #expect(pluginFiles.contains(file), "\(file) is in python3-aspects-pytest")
        }
        #expect(
            pluginFiles.contains { $0.hasPrefix(site + "/aspects_pytest-") && $0.hasSuffix(".dist-info/entry_points.txt") },
            "\(pluginFiles)")
        #expect(!files.contains { $0.hasPrefix("/usr/lib/python3") }, "the plugin is its own package")
        #expect(!files.contains { $0.hasPrefix("/usr/share/lintian") }, "a dynamically linked aspectctl needs no lintian override")
        let plugin = try Self.controlFields(pluginDeb)
        #expect(
            plugin["Architecture"] == "all" && plugin["Depends"]?.contains("aspects (= \(version))") == true
                && plugin["Depends"]?.contains("python3-pytest") == true, "\(plugin)")

        if FileManager.default.isExecutableFile(atPath: "/usr/bin/lintian") {
            let lint = try Proc.run("/usr/bin/lintian", ["--fail-on", "error,warning", deb, pluginDeb])
            #expect(lint.status == 0 && !lint.stdout.contains("E: ") && !lint.stdout.contains("W: "), "lintian:\n\(lint)")
        } else {
            SkipLedger.shared.note("needs lintian (the Debian package's check; .ci/run installs it)")
        }

        // Installed on this machine: whatever fails below, the packages are removed again (purged:
        // a half-done install leaves nothing either). dpkg's lock may be another's a moment. The
        // plugin's package only where the system's pytest is: the test installs nothing else.
        let withPlugin = Debian.state("python3-pytest") == "installed"
        if !withPlugin { SkipLedger.shared.note("needs python3-pytest (the pytest plugin package's install test)") }
        defer {
            let left = Debian.ours.filter { Debian.state($0) != nil }
            if !left.isEmpty { _ = try? Proc.run("/usr/bin/dpkg", ["--purge"] + left) }
        }
        let install = try Proc.run(
            "/usr/bin/apt-get",
            ["install", "-y", "-q", "--no-install-recommends", "-o", "DPkg::Lock::Timeout=120", deb] + (withPlugin ? [pluginDeb] : []),
            environment: ["DEBIAN_FRONTEND": "noninteractive"])
        let installed = withPlugin ? Debian.ours : ["aspects"]
        try #require(install.status == 0 && installed.allSatisfy { Debian.state($0) == "installed" }, "apt-get install:\n\(install)")
        let owned = try Proc.run("/usr/bin/dpkg", ["-L"] + installed).stdout.split(separator: "\n").map(String.init)

        // The README's first taste, as written, with nothing but the installed package: a bare
        // `aspectctl` is /usr/bin's, which finds the preload in the multiarch directory.
        let taste = try #require(
            DocExamplesTests.parse(page: "README.md", text: String(contentsOfFile: Paths.root + "/README.md", encoding: .utf8))
                .first { $0.language == "console" && $0.isExample })
        let expectation = try #require(taste.expectation, "README.md:\(taste.line)")
        let clean = ["/usr/bin/env", "-i", "PATH=/usr/bin:/bin", "HOME=" + dir]
        let run = try Proc.run(clean[0], Array(clean.dropFirst()) + ["bash", "-e", "-c", taste.script], directory: dir)
        #expect(run.status == expectation.status, "README.md:\(taste.line)\n\(run)")
        for (stream, wanted) in expectation.contains {
            let text = ["stdout": run.stdout, "stderr": run.stderr, "output": run.stdout + run.stderr][stream]
            #expect(text?.contains(wanted) == true, "README.md:\(taste.line): \(stream) contains \"\(wanted)\"\n\(run)")
        }
        let which = try Proc.run(clean[0], Array(clean.dropFirst()) + ["sh", "-c", "command -v aspectctl"])
        #expect(which.stdout == "/usr/bin/aspectctl\n", "\(which)")

        let man = try Proc.run(clean[0], Array(clean.dropFirst()) + ["MANPAGER=cat", "MANWIDTH=80", "man", "aspectctl"])
        #expect(
            man.status == 0 && man.stdout.contains("aspectctl") && man.stdout.contains("ASPECTS_PRELOAD"), "man aspectctl:\n\(man.stderr)")
        let located = try Proc.run(clean[0], Array(clean.dropFirst()) + ["man", "-w", "aspectctl"])
        #expect(located.stdout == "/usr/share/man/man1/aspectctl.1.gz\n", "\(located)")

        if withPlugin {
            // the system's pytest loads the plugin by its entry point; its fixture runs /usr/bin/aspectctl
            try """
            def test_the_first_taste(aspects):
                r = aspects.run(["cat", "/etc/hostname"], inject=["open(/etc/hostname):error=ENOENT"], expect_fired=True)
                assert aspects.aspectctl == "/usr/bin/aspectctl"
                assert r.returncode == 1 and "No such file or directory" in r.stderr, r.stderr

            """.write(toFile: dir + "/test_taste.py", atomically: true, encoding: .utf8)
            let pytest = try Proc.run(
                clean[0], Array(clean.dropFirst()) + ["/usr/bin/python3", "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_taste.py"],
                directory: dir)
            #expect(pytest.status == 0 && pytest.stdout.contains("1 passed"), "pytest with the installed plugin:\n\(pytest)")
        } else if FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") {
            // the plugin's entry point as Debian's python3 reads it, from the unpacked package
            let unpacked = dir + "/plugin"
            #expect(try Proc.run("/usr/bin/dpkg-deb", ["-x", pluginDeb, unpacked]).status == 0)
            let entry = try Proc.run(
                "/usr/bin/python3",
                [
                    "-I", "-c",
                    "import sys; sys.path.insert(0, sys.argv[1]); from importlib.metadata import entry_points;"
                        + "print(*[e.value for e in entry_points(group='pytest11') if e.name == 'aspects'])",
                    unpacked + site,
                ])
            #expect(entry.status == 0 && entry.stdout == "aspects_pytest.plugin\n", "\(entry)")
        }

        let remove = try Proc.run("/usr/bin/dpkg", ["-r"] + installed)
        #expect(
            remove.status == 0 && Debian.ours.allSatisfy { Debian.state($0) == nil },
            "dpkg -r (no conffiles: nothing kept for a purge):\n\(remove)")
        // Every file and directory of its own is gone (directories it shares, /usr/bin…, stay).
        let left = owned.filter { path in
            var isDir: ObjCBool = false
            return FileManager.default.fileExists(atPath: path, isDirectory: &isDir) && (!isDir.boolValue || path.contains("aspects"))
        }
        #expect(left.isEmpty, "left behind: \(left)")
    }

    /// The arm64 package on this x86-64 machine needs the same Swift SDK as the aarch64 tarball,
    /// and stops the same way before building anything.
    @Test func anArm64PackageNeedsASwiftSDKAndSaysSoBeforeBuilding() throws {
        #if arch(x86_64)
        let dir = NSTemporaryDirectory() + "aspects-deb-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let cross = try Proc.run("/bin/bash", [Paths.root + "/scripts/package.sh", "--deb", "--arch", "arm64", dir])
        #expect(
            cross.status == 64 && cross.stderr.contains("--swift-sdk ID") && cross.stderr.contains("aarch64-swift-linux-musl"), "\(cross)")
        #expect(!FileManager.default.fileExists(atPath: dir), "nothing is made before the refusal")
        #endif
    }

    /// `dpkg-deb --contents`: the package's paths ("/usr/bin/aspectctl"), every one root's.
    static func contents(_ deb: String) throws -> Set<String> {
        let listing = try Proc.run("/usr/bin/dpkg-deb", ["--contents", deb])
        let entries = listing.stdout.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true) }
        #expect(
            listing.status == 0 && !entries.isEmpty && entries.allSatisfy { $0.count >= 6 && $0[1] == "root/root" },
            "every file root's: \(listing)")
        return Set(entries.compactMap { $0.last.map { String($0.dropFirst()) } })  // "./usr/bin/x" → "/usr/bin/x"
    }

    /// `dpkg-deb --field`: the control file's fields, continuation lines joined.
    static func controlFields(_ deb: String) throws -> [String: String] {
        let r = try Proc.run("/usr/bin/dpkg-deb", ["--field", deb])
        try #require(r.status == 0, "\(r)")
        var fields: [String: String] = [:]
        var last: String?
        for line in r.stdout.split(separator: "\n", omittingEmptySubsequences: false) where !line.isEmpty {
            if line.first == " ", let key = last {
                fields[key, default: ""] += "\n" + line
            } else if let colon = line.firstIndex(of: ":") {
                let key = String(line[..<colon])
                fields[key] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                last = key
            }
        }
        return fields
    }
}
