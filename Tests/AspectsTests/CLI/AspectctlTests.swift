import CAspectsABI
import Foundation
import Testing
import AspectsCore
import AspectsRules

/// The built aspectctl binary: whole outputs and exit statuses.
@Suite(.tags(.realPrograms)) struct AspectctlTests {
    @Test(.tags(.realPrograms)) func catUnderRunPrintsTheInjectedErrorAndExitsOne() throws {
        let r = try Proc.aspectctl(["run", "--rule",
            #"{"symbol":"open","position":"instead","action":{"fail":"ENOENT"},"when":{"args":[{"arg":0,"glob":"/etc/host*"}]}}"#,
            "--", "cat", "/etc/hostname"])
        #expect(r.status == 1)
        #expect(r.stderr == "cat: /etc/hostname: No such file or directory\n")
        #expect(r.stdout == "")
    }

    @Test(.tags(.realPrograms)) func runExitsWithTheCommandsStatusAndReports() throws {
        let ok = try Proc.aspectctl(["run", "--report", "--rule", #"{"id":"w","symbol":"write","position":"after","action":{"log":true}}"#, "--", "sh", "-c", "echo hi; exit 7"])
        #expect(ok.status == 7)
        #expect(ok.stdout == "hi\n")
        #expect(ok.stderr.contains("aspectctl: report for sh (exit status 7)"))
        #expect(ok.stderr.contains("w     write   after           1      1  active"), "\(ok.stderr)")
        #expect(ok.stderr.contains(" w fired after write(1, 0x"), "\(ok.stderr)")
        let killed = try Proc.aspectctl(["run", "--rule", #"{"symbol":"close","position":"after","action":{"log":true}}"#, "--", "sh", "-c", "kill -TERM $$"])
        #expect(killed.status == 128 + 15)
        let missing = try Proc.aspectctl(["run", "--rule", #"{"symbol":"close","position":"after","action":{"log":true}}"#, "--", "/no/such/program"])
        #expect(missing.status == 127)
    }

    /// Nothing injected is never silent (issue 14): a rule that never matched, a command
    /// nothing attached from, and --expect-fired turning that into exit 124; aspectctl's own
    /// errors exit 125, apart from any status of the command; `run --help` is run's help.
    @Test func runSaysWhenNothingWasInjected() throws {
        let never = try Proc.aspectctl(["run", "--rule", #"{"id":"n","symbol":"connect","position":"instead","action":{"fail":"ECONNREFUSED"}}"#, "--", "sh", "-c", "exit 3"])
        #expect(never.status == 3, "\(never)")
        #expect(never.stderr.contains("aspectctl: rule \"n\" never matched a call (1 process(es) attached)"), "\(never)")
        let expected = try Proc.aspectctl(["run", "--expect-fired", "--rule", #"{"id":"n","symbol":"connect","position":"instead","action":{"fail":"ECONNREFUSED"}}"#, "--", "true"])
        #expect(expected.status == 124, "\(expected)")
        let fired = try Proc.aspectctl(["run", "--expect-fired", "--rule", #"{"id":"w","symbol":"write","position":"after","action":{"log":true}}"#, "--", "sh", "-c", "echo hi"])
        #expect(fired.status == 0 && !fired.stderr.contains("never"), "\(fired)")
        // A program that drops the environment: nothing attached.
        let dropped = try Proc.aspectctl(["run", "--expect-fired", "--rule", #"{"id":"w","symbol":"write","position":"after","action":{"log":true}}"#, "--", "/usr/bin/env", "-i", "/bin/echo", "hi"])
        #expect(dropped.status == 124, "\(dropped)")
        // env itself attached (it is dynamically linked); the echo it started did not
        #expect(dropped.stderr.contains("rule \"w\""), "\(dropped)")
        let duplicate = try Proc.aspectctl(["run", "--rule", #"{"id":"x","symbol":"write","position":"after","action":{"log":true}}"#,
                                            "--rule", #"{"id":"x","symbol":"read","position":"after","action":{"log":true}}"#, "--", "true"])
        #expect(duplicate.status == 125 && duplicate.stderr.contains("id \"x\" is used by rule 1 too"), "\(duplicate)")
        let help = try Proc.aspectctl(["run", "--help"])
        #expect(help.status == 0 && help.stdout.contains("USAGE: aspectctl run"), "\(help)")
    }

    /// 126 (found, cannot be run) and 127 (not found) are run's own statuses, said once: no
    /// "nothing was injected" warning after them (nothing could be), whatever --expect-fired asks.
    @Test(.tags(.realPrograms)) func aCommandThatCannotStartExits126Or127WithoutNothingInjectedWarnings() throws {
        let dir = NSTemporaryDirectory() + "aspects-run-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { TableSegments.removeScratch(dir) }
        let script = dir + "/not-executable.sh"
        try "#!/bin/sh\necho hi\n".write(toFile: script, atomically: true, encoding: .utf8)
        #expect(chmod(script, 0o644) == 0)
        let rule = #"{"id":"w","symbol":"write","position":"after","action":{"log":true}}"#
        for (command, status, why) in [(script, Int32(126), "Permission denied"), (dir, 126, "Permission denied"),
                                      (dir + "/missing", 127, "No such file or directory")] {
            for extra in [[], ["--expect-fired"]] {
                let r = try Proc.aspectctl(["run"] + extra + ["--rule", rule, "--", command])
                #expect(r.status == status, "\(command) \(extra): \(r)")
                #expect(r.stderr == "aspectctl: cannot run \(command): \(why)\n", "\(command) \(extra): \(r)")
            }
        }
        // A program's own 126 and 127 are the program's: the table was attached, so the
        // warnings about what was not injected still come.
        let own = try Proc.aspectctl(["run", "--rule", #"{"id":"c","symbol":"connect","position":"instead","action":{"fail":"ECONNREFUSED"}}"#, "--", "sh", "-c", "exit 126"])
        #expect(own.status == 126 && own.stderr.contains("rule \"c\" never matched a call"), "\(own)")
    }

    /// A process that refused the table (here: a preload of another ABI version, simulated by
    /// changing the header's version while it starts) is named by `list` and `stats`.
    @Test(.tags(.realPrograms)) func listAndStatsSayAProcessRefusedTheTable() throws {
        let t = try ScratchTable()
        try t.add(#"{"id":"h","symbol":"open","position":"instead","action":{"fail":"ENOENT"}}"#)
        let offset = MemoryLayout<aspects_table_header>.offset(of: \aspects_table_header.abi_version)!
        try TableSegments.write(t.name, ASPECTS_ABI_VERSION + 1, at: offset)
        let refused = try Proc.run("/bin/cat", ["/etc/hostname"], environment: Proc.preload(table: t.name))
        #expect(refused.status == 0, "the refusing process runs unadvised: \(refused)")
        try TableSegments.write(t.name, ASPECTS_ABI_VERSION, at: offset)
        for command in ["list", "stats"] {
            let r = try Proc.aspectctl([command, "--table", t.name])
            #expect(r.status == 0, "\(r)")
            #expect(r.stdout.contains("attached: 0 process(es), 0 running; 1 refused the table (last: pid ")
                    && r.stdout.contains(", the table was written for another ABI version)"), "\(command): \(r)")
        }
    }

    /// check reports every problem of a file, in text and in JSON (issue 14).
    @Test func checkReportsEveryErrorAlsoAsJSON() throws {
        let rules = #"[{"symbol":"write","position":"instead","action":{"fail":"EIO"}},{"symbol":"nosuch","position":"instead","action":{"fail":"EIO"}},{"id":"a","symbol":"write","position":"around"},{"id":"a","symbol":"read","position":"after","action":{"log":true}},{"id":"a","symbol":"read","position":"after","action":{"log":true}}]"#
        let text = try Proc.run(Paths.aspectctl, ["check", "--rules", "-"], stdin: rules)
        #expect(text.status == 65, "\(text)")
        let lines = text.stderr.split(separator: "\n")
        #expect(lines.count == 3, "\(text)")
        #expect(text.stderr.contains("unknown position \"around\"") && text.stderr.contains("rule 2: symbol: nosuch is not in the catalog")
                && text.stderr.contains("id \"a\" is used by rule 4 too"), "\(text)")
        let json = try Proc.run(Paths.aspectctl, ["check", "--json", "--rules", "-"], stdin: rules)
        #expect(json.status == 65)
        let doc = try JSONParser.parse(json.stdout)
        guard case .array(let errors)? = doc["errors"]?.value else { Issue.record("no errors array: \(json)"); return }
        #expect(errors.count == 3)
        #expect(errors.compactMap { if case .string(let c)? = $0["code"]?.value { return c } else { return nil } } == ["E5", "E6", "E15"])
        if case .bool(let valid)? = doc["valid"]?.value { #expect(!valid) } else { Issue.record("no valid field") }
    }

    static let staticLibc = FileManager.default.fileExists(atPath: "/usr/lib/x86_64-linux-gnu/libc.a")

    @Test(.tags(.realPrograms), .requires(staticLibc, "needs libc.a (Debian: libc6-dev) for static fixtures"))
    func runSaysAStaticBinaryAttachedNothing() throws {
        let bin = try Fixture.build("signal_raise", flags: ["-static"])
        let r = try Proc.aspectctl(["run", "--expect-fired", "--rule", #"{"symbol":"getppid","position":"instead","action":{"return":1}}"#, "--", bin])
        #expect(r.status == 124, "\(r)")
        #expect(r.stderr.contains("no process attached the table, so nothing was injected") && r.stderr.contains("is statically linked"), "\(r)")
    }

    /// Warned before the command starts, for a static binary and for a script whose
    /// interpreter is one (the script's dynamic children are still advised).
    @Test(.tags(.realPrograms), .requires(staticLibc, "needs libc.a (Debian: libc6-dev) for static fixtures"))
    func runWarnsBeforeStartingAStaticProgramOrScript() throws {
        let bin = try Fixture.build("signal_raise", flags: ["-static"])
        let rule = #"{"symbol":"getppid","position":"before","action":{"log":true}}"#
        let direct = try Proc.aspectctl(["run", "--rule", rule, "--", bin])
        #expect(direct.stderr.hasPrefix("aspectctl: warning: \(bin) is statically linked: LD_PRELOAD cannot reach it"), "\(direct)")
        let dir = NSTemporaryDirectory() + "aspects-static-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { TableSegments.removeScratch(dir) }
        let script = dir + "/script"
        try "#!\(bin)\n".write(toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o755)
        let viaScript = try Proc.aspectctl(["run", "--rule", rule, "--", script])
        #expect(viaScript.stderr.contains("warning: \(script) is a script run by \(bin), which is statically linked"), "\(viaScript)")
        let dynamic = try Proc.aspectctl(["run", "--rule", rule, "--", "/bin/true"])
        #expect(!dynamic.stderr.contains("warning"), "\(dynamic)")
    }

    /// --expect-fired: bare (every rule), =N (firings in all), =ID,ID (those rules).
    @Test(.tags(.realPrograms)) func expectFiredTakesAllANumberOrRuleIds() throws {
        let w = #"{"id":"w","symbol":"write","position":"before","action":{"log":true}}"#
        let u = #"{"id":"u","symbol":"unlink","position":"before","action":{"log":true}}"#
        func status(_ expect: String) throws -> Int32 {
            try Proc.aspectctl(["run", expect, "--rule", w, "--rule", u, "--", "/bin/cat", "/etc/hostname"]).status
        }
        #expect(try status("--expect-fired") == 124, "u never fires")
        #expect(try status("--expect-fired=all") == 124)
        #expect(try status("--expect-fired=w") == 0)
        #expect(try status("--expect-fired=w,u") == 124)
        #expect(try status("--expect-fired=1") == 0)
        #expect(try status("--expect-fired=1000") == 124)
        #expect(try status("--expect-fired=nope") == 125, "an id the run does not have is our error")
        #expect(try status("--expect-fired=a/b") == 125, "a usage error of run is its own failure")
        // a bare one followed by the command without `--`
        #expect(try Proc.aspectctl(["run", "--rule", w, "--expect-fired", "/bin/true"]).status == 124)
    }

    /// Every command's --help works (run and explore capture their command's words, --help
    /// too) and its prose wraps at the terminal's width, not at the source's line ends.
    @Test func helpTextsWrapAtTheTerminal() throws {
        let commands = ["", "run", "create", "destroy", "add", "remove", "list", "events", "stats", "check", "catalog", "preflight", "calls",
                        "explore", "explore campaign", "explore merge", "tables", "gc"]
        for c in commands {
            let r = try Proc.aspectctl(c.split(separator: " ").map(String.init) + ["--help"], environment: ["COLUMNS": "80"])
            #expect(r.status == 0 && r.stdout.hasPrefix("OVERVIEW: "), "\(c): \(r)")
            let lines = r.stdout.split(separator: "\n", omittingEmptySubsequences: false)
            for (i, line) in lines.enumerated() where !line.hasPrefix("USAGE:") && !line.hasPrefix("  aspectctl ") {
                #expect(line.count <= 80, "\(c): too long: \(line)")
                // a paragraph broken after its first word (a source line end kept): "loaded\nwith"
                if i + 1 < lines.count, !line.isEmpty, !line.hasPrefix(" "), !lines[i + 1].isEmpty, !lines[i + 1].hasPrefix(" ") {
                    #expect(line.count > 40, "\(c): a line broken early: \"\(line)\"")
                }
            }
        }
    }

    /// The root's help lists the commands by group; explore's names its default and merge.
    @Test func helpGroupsTheCommandsAndNamesExploresSubcommands() throws {
        let root = try Proc.aspectctl(["--help"], environment: ["COLUMNS": "80"])
        let groups = ["PROGRAM SUBCOMMANDS:", "RULE SUBCOMMANDS:", "TABLE SUBCOMMANDS:", "EXPLORATION SUBCOMMANDS:"]
        let at = groups.compactMap { root.stdout.range(of: $0)?.lowerBound }
        #expect(root.status == 0 && at.count == groups.count && at == at.sorted(), "\(root)")
        let explore = try Proc.aspectctl(["explore", "--help"], environment: ["COLUMNS": "80"])
        #expect(explore.status == 0 && explore.stdout.contains("campaign (default)") && explore.stdout.contains("  merge "), "\(explore)")
    }

    @Test func runCleansUpItsPrivateTable() throws {
        // The child names the table run made for it; other tests' runs come and go meanwhile.
        let r = try Proc.aspectctl(["run", "--rule", #"{"symbol":"close","position":"after","action":{"log":true}}"#, "--", "/bin/sh", "-c", "echo $ASPECTS_TABLE"])
        #expect(r.status == 0, "\(r)")
        let table = r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(table.hasPrefix("run-"), "\(r)")
        #expect(!FileManager.default.fileExists(atPath: "/dev/shm/aspects.\(table)"), "\(table)")
    }

    @Test func createAddListRemoveDestroy() throws {
        let name = "test-cli-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { _ = try? Proc.aspectctl(["destroy", "--table", name]) }
        #expect(try Proc.aspectctl(["create", "--table", name]).stdout == "created table \(name) (/dev/shm/aspects.\(name))\n")
        let again = try Proc.aspectctl(["create", "--table", name])
        #expect(again.status == 73)
        #expect(again.stderr.contains("table \"\(name)\" already exists"))

        let add = try Proc.aspectctl(["add", "--table", name, Paths.root + "/config/examples/slow-connect.json"])
        #expect(add.status == 0, "\(add)")
        #expect(add.stdout == "slow-connect@1\n")
        let add2 = try Proc.aspectctl(["add", "--rule", #"{"symbol":"fsync","position":"instead","action":{"fail":true}}"#], environment: ["ASPECTS_TABLE": name])
        #expect(add2.stdout == "r1@2\n")
        let list = try Proc.aspectctl(["list", "--table", name])
        #expect(list.stdout == """
            slow-connect  before connect: delay 200ms, log  when arg 1 (addr) != 0x0  (matched 0, fired 0)
            r1  instead fsync: return -1 errno EIO  (matched 0, fired 0)
            attached: 0 process(es), 0 running

            """)
        let json = try Proc.aspectctl(["list", "--table", name, "--json"])
        let parsed = try JSONParser.parse(json.stdout)
        guard case .array(let items) = parsed.value else { Issue.record("not an array"); return }
        #expect(items.count == 2)
        #expect(items[1]["id"]?.value == .string("r1"))
        #expect(items[1]["symbol"]?.value == .string("fsync"))

        let dup = try Proc.aspectctl(["add", "--table", name, "--rule", #"{"id":"r1","symbol":"write","position":"instead","action":{"fail":true}}"#])
        #expect(dup.status == 65)
        #expect(dup.stderr.contains("the table already has a rule \"r1\""))

        #expect(try Proc.aspectctl(["remove", "--table", name, "r1"]).stdout == "r1\n")
        let gone = try Proc.aspectctl(["remove", "--table", name, "r1"])
        #expect(gone.status == 65)
        #expect(gone.stderr.contains("has no active rule \"r1\""))
        #expect(try Proc.aspectctl(["list", "--table", name, "--all"]).stdout.contains("r1  [removed by pid "))
        #expect(try Proc.aspectctl(["remove", "--table", name, "--all"]).stdout == "slow-connect\n")
        #expect(try Proc.aspectctl(["list", "--table", name]).stdout == "no rules\nattached: 0 process(es), 0 running\n")
        #expect(try Proc.aspectctl(["destroy", "--table", name]).status == 0)
        #expect(try Proc.aspectctl(["list", "--table", name]).status == 66)
    }

    @Test func aFileWithOneBadRuleWritesNothing() throws {
        let t = try ScratchTable()
        let file = t.directory + "/rules.json"
        try #"""
        {"rules": [
          {"id": "good", "symbol": "write", "position": "instead", "action": {"fail": true}},
          {"id": "bad", "symbol": "write", "position": "instead", "action": {"fail": "ENOTAERRNO"}}
        ]}
        """#.write(toFile: file, atomically: true, encoding: .utf8)
        let r = try Proc.aspectctl(["add", "--table", t.name, file])
        #expect(r.status == 65)
        #expect(r.stderr == "aspectctl: error: rule \"bad\": action.fail: unknown errno name \"ENOTAERRNO\"; use a name from errno(3), such as \"EIO\" or \"ENOSPC\" [unknown error name, E13]\n")
        #expect(t.table.rules(includeRemoved: true).isEmpty)
        let check = try Proc.aspectctl(["check", file])
        #expect(check.status == 65)
    }

    @Test func checkValidatesEveryExample() throws {
        let dir = Paths.root + "/config/examples"
        let files = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".json") }.sorted()
        #expect(files.count >= 4)
        for f in files {
            let r = try Proc.aspectctl(["check", dir + "/" + f])
            #expect(r.status == 0, "\(f): \(r)")
        }
    }

    @Test func malformedJSONOnTheCommandLine() throws {
        let r = try Proc.aspectctl(["check", "--rule", #"{"symbol": "write", "position": instead}"#])
        #expect(r.status == 65)
        #expect(r.stderr == "aspectctl: error: --rule:1:33: unexpected character 'i'; a value was expected; fix the JSON syntax at that position [malformed JSON, E1]\n")
    }

    @Test func usageErrors() throws {
        #expect(try Proc.aspectctl(["list"]).status == 64)
        #expect(try Proc.aspectctl(["remove", "--table", "x"]).status == 64)
        #expect(try Proc.aspectctl(["run", "--rule", "{}"]).status == 125)
        #expect(try Proc.aspectctl(["list", "--table", "bad/name"]).status == 64)
        #expect(try Proc.aspectctl(["add", "--table", "x", "/no/such/rules.json"]).status == 66)
    }

    @Test func preflightSaysWhatAProgramCallsAndWhichRulesCannotFire() throws {
        let bin = try Fixture.build("open_calls")
        let ok = try Proc.aspectctl(["preflight", bin, "--rule", #"{"symbol":"open","position":"instead","action":{"fail":true}}"#])
        #expect(ok.status == 0, "\(ok)")
        #expect(ok.stdout.contains("  open  (open_calls-"))
        let never = try Proc.aspectctl(["preflight", bin, "--rule", #"{"id":"c","symbol":"connect","position":"instead","action":{"fail":true}}"#])
        #expect(never.status == 1)
        #expect(never.stdout.contains("warning: rule \"c\": can never fire: neither the program nor its libraries import connect"))
        let fortified = try Fixture.build("open_calls", flags: ["-O2", "-D_FORTIFY_SOURCE=2"])
        let alias = try Proc.aspectctl(["preflight", fortified, "--json", "--rule", #"{"symbol":"open","position":"instead","action":{"fail":true}}"#])
        #expect(alias.status == 0)
        let json = try JSONParser.parse(alias.stdout)
        guard case .array(let findings)? = json["findings"]?.value else { Issue.record("no findings"); return }
        #expect(findings.first?["severity"]?.value == .string("note"))
        let staticBin = try Fixture.build("open_calls", flags: ["-static"])
        let s = try Proc.aspectctl(["preflight", staticBin, "--rule", #"{"symbol":"open","position":"instead","action":{"fail":true}}"#])
        #expect(s.status == 1)
        #expect(s.stdout.contains("statically linked: LD_PRELOAD does not apply"))
    }

    @Test func catalogListsGroupsAndSearches() throws {
        let all = try Proc.aspectctl(["catalog"])
        #expect(all.status == 0)
        #expect(all.stdout.contains("  int open(const char *path, int flags, ... /* mode_t mode */)\n      also: open64 __open_2 __open64_2\n"), "\(all.stdout.prefix(300))")
        let found = try Proc.aspectctl(["catalog", "--search", "fsync"])
        #expect(found.stdout == "[file]\n  int fsync(int fd)\n      fails: -1 errno, default EIO; errors: EIO EBADF EINVAL EROFS ENOSPC EDQUOT EINTR\n"
                 + "      fails after its work (\"fail\" without a position: after): a write-back error is reported after the write-back ran (and the pages may be marked clean)\n",
                 "\(found.stdout)")
        let json = try JSONParser.parse(try Proc.aspectctl(["catalog", "--json"]).stdout)
        guard case .array(let groups) = json.value else { Issue.record("not an array"); return }
        #expect(groups.count == Catalog.builtIn.groups.count)
    }
}
