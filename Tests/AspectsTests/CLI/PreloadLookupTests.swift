import Foundation
import Testing

/// Where aspectctl finds libaspects.so when neither --preload nor ASPECTS_PRELOAD names it: in
/// the Debian package's layout, BIN/../lib/MULTIARCH/aspects (MULTIARCH as Debian's own tools
/// name this machine's, not as aspectctl does); and a lookup that finds nothing names that
/// place among those it looked at.
@Suite struct PreloadLookupTests {
    @Test func aspectctlFindsThePreloadInTheMultiarchDirectory() throws {
        let root = NSTemporaryDirectory() + "aspects-lookup-\(UUID().uuidString)"
        defer { TableSegments.removeScratch(root) }
        let bin = root + "/usr/bin"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        // aspectctl looks beside the program it is (/proc/self/exe): a link of the built one,
        // a copy where the temporary directory is on another file system.
        if link(Paths.aspectctl, bin + "/aspectctl") != 0 {
            try FileManager.default.copyItem(atPath: Paths.aspectctl, toPath: bin + "/aspectctl")
        }
        let multiarch = try Self.debianMultiarch()
        let place = root + "/usr/lib/" + multiarch + "/aspects/libaspects.so"
        let taste = ["run", "--inject", "open(/etc/hostname):error=ENOENT", "--", "cat", "/etc/hostname"]

        let missing = try Proc.run(bin + "/aspectctl", taste)
        #expect(
            missing.status != 0 && missing.stderr.contains("cannot find libaspects.so")
                && missing.stderr.contains(bin + "/../lib/" + multiarch + "/aspects/libaspects.so"), "\(missing)")

        try FileManager.default.createDirectory(atPath: (place as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Paths.library, toPath: place)
        let found = try Proc.run(bin + "/aspectctl", taste)
        #expect(found.status == 1 && found.stderr.contains("cat: /etc/hostname: No such file or directory"), "\(found)")
    }

    /// This machine's multiarch directory name, as dpkg-architecture (Debian) or the C compiler says it.
    static func debianMultiarch() throws -> String {
        let asked =
            FileManager.default.isExecutableFile(atPath: "/usr/bin/dpkg-architecture")
            ? try Proc.run("/usr/bin/dpkg-architecture", ["-qDEB_HOST_MULTIARCH"])
            : try Proc.run("/usr/bin/env", ["cc", "-print-multiarch"])
        let name = asked.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        try #require(asked.status == 0 && !name.isEmpty, "\(asked)")
        return name
    }
}
