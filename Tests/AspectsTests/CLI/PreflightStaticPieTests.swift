import Foundation
import Testing
import AspectsCore
import AspectsPreflight

/// A static-pie executable (`cc -static-pie`, Debian's /sbin/ldconfig) has a dynamic section,
/// for relocating itself, but asks for no program interpreter: the dynamic loader never runs,
/// so LD_PRELOAD never applies. preflight, run and explore treat it as the static program it is.
@Suite struct PreflightStaticPieTests {
    static let ldconfig = "/sbin/ldconfig"
    static let hasLdconfig = FileManager.default.isExecutableFile(atPath: ldconfig)
    static let staticLibc = FileManager.default.fileExists(atPath: "/usr/lib/x86_64-linux-gnu/libc.a")

    @Test(.tags(.realPrograms), .requires(hasLdconfig, "needs /sbin/ldconfig (Debian: a static-pie)"))
    func preflightSaysLdconfigIsStatic() throws {
        #expect(try Preflight(binary: Self.ldconfig).isDynamic == false)
        let r = try Proc.aspectctl(["preflight", "--", Self.ldconfig])
        #expect(r.status == 1, "\(r)")
        #expect(r.stdout.hasPrefix("\(Self.ldconfig): statically linked"), "\(r)")
        #expect(!r.stdout.contains("dynamically linked"), "\(r)")
        #expect(r.stdout.contains("warning: \(Self.ldconfig) is statically linked"), "\(r)")
        let json = try JSONParser.parse(try Proc.aspectctl(["preflight", "--json", Self.ldconfig]).stdout)
        #expect(json["dynamic"]?.value == .bool(false))
    }

    @Test(.tags(.realPrograms), .requires(staticLibc, "needs libc.a (Debian: libc6-dev) for static fixtures"))
    func aStaticPieIsStaticToPreflightRunAndExplore() throws {
        let bin = try Fixture.build("open_calls", flags: ["-static-pie"])
        let p = try Preflight(binary: bin)
        let (dynamic, staticPie, objects) = (p.isDynamic, p.isStaticPie, p.objects.count)
        #expect(!dynamic && staticPie && objects == 1)

        let pre = try Proc.aspectctl(["preflight", bin])
        #expect(pre.status == 1, "\(pre)")
        #expect(pre.stdout.hasPrefix("\(bin): statically linked (static-pie"), "\(pre)")

        // run warns before the command starts (naming the static-pie), and says afterwards why nothing attached
        let rule = #"{"symbol":"open","position":"before","action":{"log":true}}"#
        let run = try Proc.aspectctl(["run", "--rule", rule, "--", bin, "/dev/null", "1"])
        #expect(run.stderr.hasPrefix("aspectctl: warning: \(bin) is statically linked (a static-pie): LD_PRELOAD cannot reach it"), "\(run)")
        #expect(run.stderr.contains("no process attached the table"), "\(run)")

        // explore refuses it rather than running a campaign that cannot inject anything
        let dir = NSTemporaryDirectory() + "aspects-staticpie-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { TableSegments.removeScratch(dir) }
        let explore = try Proc.aspectctl(["explore", "--out", dir + "/out", "--", bin, "/dev/null", "1"])
        #expect(explore.status != 0 && explore.status != 1, "\(explore)")
        #expect(explore.stderr.contains("\(bin) is statically linked"), "\(explore)")
    }

    /// A position-independent executable that asks for the loader stays dynamic.
    @Test func anOrdinaryPieStaysDynamic() throws {
        let bin = try Fixture.build("open_calls", flags: ["-fPIE", "-pie"])
        let p = try Preflight(binary: bin)
        let (dynamic, staticPie, objects) = (p.isDynamic, p.isStaticPie, p.objects.count)
        #expect(dynamic && !staticPie && objects > 1)
        let pre = try Proc.aspectctl(["preflight", bin])
        #expect(pre.stdout.hasPrefix("\(bin): dynamically linked, "), "\(pre)")
    }
}
