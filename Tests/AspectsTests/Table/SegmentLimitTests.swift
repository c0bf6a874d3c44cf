import Foundation
import Testing

/// With the System V ids taken by a neighbour, the error names the limit,
/// counts the caller's segments and names who holds the rest — not "--events" (never given),
/// nor `gc` (which cannot free another user's segments). Runs in a private IPC namespace with
/// its own kernel.shmmni (unshare: needs root), so the machine's segments are not touched.
@Suite(.tags(.realPrograms)) struct SegmentLimitTests {
    static let canUnshare = geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare")
        && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") && FileManager.default.isExecutableFile(atPath: "/usr/bin/python3")

    @Test(.enabled(if: canUnshare, "needs root, unshare, setpriv and python3"))
    func exhaustedIdsNameTheLimitAndWhoHoldsThem() throws {
        let dir = NSTemporaryDirectory() + "aspects-shmmni-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { TableSegments.removeScratch(dir) }
        // the neighbour (uid 65534) takes all 3 ids of the namespace; the segments go with it
        let script = """
            echo 3 > /proc/sys/kernel/shmmni || exit 90
            /usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups -- /usr/bin/python3 -c \
              'import ctypes; l = ctypes.CDLL(None); assert all(l.shmget(0, 4096, 0o1600) >= 0 for _ in range(3))' || exit 91
            "$0" create --table "$1"
            echo "create: $?" >&2
            ASPECTS_PRELOAD="$2" "$0" run -- /bin/true
            echo "run: $?" >&2
            """
        let r = try Proc.run("/usr/bin/unshare", ["--ipc", "/bin/sh", "-c", script, Paths.aspectctl, dir + "/t", Paths.library])
        #expect(r.status == 0 && r.stderr.contains("create: 71") && r.stderr.contains("run: 125"), "\(r)")
        let lines = r.stderr.split(separator: "\n").filter { $0.hasPrefix("aspectctl: error:") }
        #expect(lines.count == 2, "\(r)")
        for line in lines {
            #expect(!line.contains("--events") && !line.contains("gc"), "\(line)")
            #expect(line.contains("all 3 System V shared memory ids of the system are taken (kernel.shmmni, /proc/sys/kernel/shmmni)")
                    && line.contains("0 segment(s) are yours") && line.contains("user nobody (uid 65534) holds 3")
                    && line.contains("ipcrm -m ID") && line.contains("sysctl kernel.shmmni=N"), "\(line)")
        }
    }
}
