import Foundation
import Testing

/// Options are parsed strictly before the command (issue 24, item 1): an unknown option is a
/// usage error with "did you mean", never the name of the program to run; `--expect-fired`
/// takes a value only attached, so it never takes the program's name; the ids it names are
/// checked before the program starts; and every word from the program on is the program's.
@Suite struct OptionParsingTests {
    static let writeLog = #"{"id":"w","symbol":"write","position":"before","action":{"log":true}}"#

    func scratch() throws -> String {
        let dir = NSTemporaryDirectory() + "aspects-options-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    /// A command that leaves a file behind: whether it ran at all.
    static func marking(_ file: String) -> [String] { ["/bin/sh", "-c", "echo ran > '\(file)'"] }

    @Test func runRefusesAnUnknownOptionBeforeTheCommand() throws {
        let dir = try scratch()
        defer { TableSegments.removeScratch(dir) }
        let marker = dir + "/ran"
        for (args, unknown, near) in [
            (["--injct", "write:error=ENOSPC", "--"], "--injct", "--inject"),
            (["--injct=write:error=ENOSPC", "--"], "--injct", "--inject"),
            (["--inject", "write:error=ENOSPC", "--reprot", "--"], "--reprot", "--report"),
            (["--inject", "write:error=ENOSPC", "-v", "--"], "-v", nil),
        ] {
            let r = try Proc.aspectctl(["run"] + args + Self.marking(marker))
            #expect(r.status == 125, "\(args): \(r)")
            #expect(r.stderr.contains("\(unknown): not an option of run"), "\(args): \(r)")
            if let near { #expect(r.stderr.contains("did you mean \(near)?"), "\(args): \(r)") }
            #expect(!r.stderr.contains("cannot run"), "\(args): \(r)")
            #expect(!FileManager.default.fileExists(atPath: marker), "\(args): the command ran")
        }
    }

    @Test func exploreRefusesAnUnknownOptionWithItsUsageStatus() throws {
        let r = try Proc.aspectctl(["explore", "--functon", "write", "--", "/bin/true"])
        #expect(r.status == 64, "\(r)")
        #expect(r.stderr.contains("--functon: not an option of explore") && r.stderr.contains("did you mean --function?"), "\(r)")
        #expect(!r.stderr.contains("not found on PATH"), "\(r)")
    }

    /// Every usage error of `run` is its own failure, 125, apart from the statuses a command
    /// exits with (64 is EX_USAGE of any sysexits program).
    @Test func runUsageErrorsExit125() throws {
        #expect(try Proc.aspectctl(["run", "--report-fd", "x", "--", "/bin/true"]).status == 125)
        #expect(try Proc.aspectctl(["run", "--rule", Self.writeLog]).status == 125)
        #expect(try Proc.aspectctl(["run", "--rule", Self.writeLog, "--"]).status == 125)
        #expect(try Proc.aspectctl(["run", "--table", "--", "/bin/true"]).status == 125)
        #expect(try Proc.aspectctl(["run", "--rule", Self.writeLog, "--", "sh", "-c", "exit 64"]).status == 64)
        #expect(try Proc.aspectctl(["run", "--help"]).status == 0)
    }

    /// `--expect-fired dd if=/dev/zero …` ran `if=/dev/zero`: the bare option took `dd`.
    @Test func expectFiredNeverTakesTheProgramsName() throws {
        let r = try Proc.aspectctl(["run", "--rule", Self.writeLog, "--expect-fired", "sh", "-c", "echo hi"])
        #expect(r.status == 0 && r.stdout == "hi\n", "\(r)")
        let dd = try Proc.aspectctl(["run", "--inject", "write:error=ENOSPC:when=1000", "--expect-fired",
                                     "dd", "if=/dev/zero", "of=/dev/null", "count=1"])
        #expect(dd.status == 124 && dd.stderr.contains("rule \"r1\" matched"), "dd ran, the rule did not fire: \(dd)")
        // the value given apart, as it was once accepted: said, not run as a command
        for value in ["1", "w,no-such-rule"] {
            let apart = try Proc.aspectctl(["run", "--rule", Self.writeLog, "--expect-fired", value, "--", "/bin/true"])
            #expect(apart.status == 125, "\(apart)")
            #expect(apart.stderr.contains("--expect-fired=\(value)"), "\(apart)")
            #expect(!apart.stderr.contains("cannot run"), "\(apart)")
        }
    }

    /// A wrong `--expect-fired=ID` was said only after the program ran.
    @Test func expectFiredIdsAreCheckedBeforeTheProgramStarts() throws {
        let dir = try scratch()
        defer { TableSegments.removeScratch(dir) }
        let marker = dir + "/ran"
        let r = try Proc.aspectctl(["run", "--rule", Self.writeLog, "--inject", "unlink:error=EIO", "--expect-fired=w,nope", "--"] + Self.marking(marker))
        #expect(r.status == 125, "\(r)")
        #expect(r.stderr.contains("\"nope\"") && r.stderr.contains("w, r1"), "names the unknown id and the run's ids: \(r)")
        #expect(!FileManager.default.fileExists(atPath: marker), "the command ran")
        #expect(!r.stderr.contains("never matched"), "\(r)")

        // in a named table, the rules are not left behind either
        let name = "test-opts-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        #expect(try Proc.aspectctl(["create", "--table", name]).status == 0)
        defer { _ = try? Proc.aspectctl(["destroy", "--table", name]) }
        let named = try Proc.aspectctl(["run", "--table", name, "--rule", Self.writeLog, "--expect-fired=nope", "--"] + Self.marking(marker))
        #expect(named.status == 125 && named.stderr.contains("\"nope\""), "\(named)")
        #expect(!FileManager.default.fileExists(atPath: marker), "the command ran")
        // a generated id is known once added: the rule is taken out again
        let generated = try Proc.aspectctl(["run", "--table", name, "--inject", "unlink:error=EIO", "--expect-fired=nope", "--"] + Self.marking(marker))
        #expect(generated.status == 125 && generated.stderr.contains("\"nope\""), "\(generated)")
        #expect(!FileManager.default.fileExists(atPath: marker), "the command ran")
        let list = try Proc.aspectctl(["list", "--table", name, "--rules"])
        #expect(list.status == 0 && !list.stdout.contains("\"w\"") && !list.stdout.contains("unlink"), "\(list)")
    }

    /// From the program's name on, every word is the program's: `--help`, options of run's
    /// own name, `--`, with or without a `--` before the program.
    @Test func theProgramsWordsPassThroughUntouched() throws {
        let words = ["x", "--help", "-h", "--expect-fired", "--injct", "--", "y"]
        let printer = ["sh", "-c", #"printf '%s\n' "$@""#]
        let expected = words.dropFirst().joined(separator: "\n") + "\n"
        let after = try Proc.aspectctl(["run", "--rule", Self.writeLog, "--"] + printer + words)
        #expect(after.status == 0 && after.stdout == expected, "\(after)")
        let bare = try Proc.aspectctl(["run", "--rule", Self.writeLog, "--expect-fired"] + printer + words)
        #expect(bare.status == 0 && bare.stdout == expected, "\(bare)")
        // after `--`, even `--help` is the program's name (there is none such)
        let help = try Proc.aspectctl(["run", "--rule", Self.writeLog, "--", "--help"])
        #expect(help.status == 127 && !help.stdout.contains("OVERVIEW"), "\(help)")
    }

    @Test func aMisspelledCommandIsNamedWithTheNearestOne() throws {
        let r = try Proc.aspectctl(["rn", "--inject", "write:error=EIO", "--", "/bin/true"])
        #expect(r.status == 64, "\(r)")
        #expect(r.stderr.contains("rn: not a command of aspectctl") && r.stderr.contains("did you mean run"), "\(r)")
    }

    /// The other commands parse every option the same strict way (the argument parser's own).
    @Test func otherCommandsRefuseUnknownOptions() throws {
        for (args, near) in [(["check", "--rulez", "x.json"], "--rules"), (["preflight", "--jsn", "/bin/true"], "--json"),
                             (["list", "--tabel", "x"], "--table"), (["add", "--stritc", "x.json"], "--strict")] {
            let r = try Proc.aspectctl(args)
            #expect(r.status == 64 && r.stderr.contains("Did you mean '\(near)'?"), "\(args): \(r)")
        }
    }
}
