import Foundation
import Testing
import AspectsCore
import AspectsRules

/// Functions outside the catalog, advised from a rule's prototype by rewriting GOT slots.
@Suite struct PrototypeTests {
    static let addRule = #"{"id":"add","symbol":"fx_add","prototype":"int fx_add(int a, int b)","position":"instead","action":{"return":-7},"when":{"nth":2}}"#

    func program(_ flags: [String]) throws -> (bin: String, libDir: String) {
        let libDir = try Fixture.library("proto_lib", soname: "fx")
        let bin = try Fixture.build("proto_main", flags: flags + ["-L", libDir, "-lfx", "-Wl,-rpath," + libDir, "-ldl"])
        return (bin, libDir)
    }

    @Test func firesInEveryLinkMode() throws {
        let variants: [[String]] = [
            ["-fPIE", "-pie"], ["-no-pie", "-fno-pie"], ["-fPIE", "-pie", "-Wl,-z,now"], ["-no-pie", "-fno-pie", "-Wl,-z,now"],
            ["-fPIE", "-pie", "-fno-plt"], ["-no-pie", "-fno-pie", "-fno-plt"], ["-fPIE", "-pie", "-Wl,-z,lazy"],
        ]
        for flags in variants {
            let t = try ScratchTable()
            try t.add(Self.addRule)
            let (bin, _) = try program(flags)
            let plain = try Proc.run(bin, ["3"])
            #expect(plain.stdout.contains("add 2: 4"), "\(flags)")
            // Without LD_BIND_NOW: lazy slots are resolved by the preload first.
            let r = try Proc.run(bin, ["3"], environment: Proc.preload(table: t.name))
            #expect(r.stdout == plain.stdout.replacingOccurrences(of: "add 2: 4", with: "add 2: -7"), "\(flags): \(r)")
            let rule = t.table.rules()[0]
            #expect(rule.fired == 1, "\(flags)")
            #expect(rule.prototypeStatus?.hasPrefix("applied: ") == true, "\(flags): \(rule.prototypeStatus ?? "-")")
        }
    }

    @Test func argumentsAndReturnValuesAreExact() throws {
        let t = try ScratchTable()
        try t.add(#"""
        {"rules": [
          {"id": "sum", "symbol": "fx_sum6", "prototype": "long fx_sum6(long a, long b, long c, long d, long e, long f)", "position": "after", "action": {"log": true}, "when": {"args": [{"arg": 5, "eq": 2}]}},
          {"id": "scale", "symbol": "fx_scale", "prototype": "double fx_scale(double x, double k)", "position": "after", "action": {"log": true}},
          {"id": "name", "symbol": "fx_name", "prototype": "const char *fx_name(int which)", "position": "instead", "action": {"return": 0}, "when": {"nth": 3}}
        ]}
        """#)
        let (bin, _) = try program(["-fPIE", "-pie"])
        let plain = try Proc.run(bin, ["3"])
        let r = try Proc.run(bin, ["3"], environment: Proc.preload(table: t.name))
        #expect(r.stdout == plain.stdout.replacingOccurrences(of: "name 3: one", with: "name 3: (null)"))
        let events = t.table.events(from: 0).events
        let sum = try #require(events.first { $0.rule == "sum" })
        #expect(sum.arguments == ["1", "2", "3", "4", "5", "2"])
        #expect(sum.returnValue == 17)
        #expect(events.filter { $0.rule == "scale" }.map(\.returnText) == ["1.5", "3.0", "4.5"])
        #expect(events.first { $0.rule == "scale" }?.arguments == ["1.0", "1.5"])
    }

    @Test func variadicPrototypesForwardTheDeclaredArguments() throws {
        let t = try ScratchTable()
        try t.add(#"""
        {"rules": [
          {"id": "v", "symbol": "fx_vsum", "prototype": "int fx_vsum(int count, ...)", "variadic": ["int", "int"],
           "position": "after", "action": {"log": true}},
          {"id": "w", "symbol": "fx_vsum", "prototype": "int fx_vsum(int count, ...)", "variadic": ["int", "int"],
           "position": "instead", "action": {"return": 99}, "when": {"nth": 2}}
        ]}
        """#)
        let (bin, _) = try program(["-fPIE", "-pie"])
        let plain = try Proc.run(bin, ["3"])
        #expect(plain.stdout.contains("vsum 3: 13"))
        let r = try Proc.run(bin, ["3"], environment: Proc.preload(table: t.name))
        #expect(r.stdout == plain.stdout.replacingOccurrences(of: "vsum 2: 12", with: "vsum 2: 99"), "\(r)")
        let events = t.table.events(from: 0).events.filter { $0.rule == "v" }
        // after advice sees every call, the replaced one too
        #expect(events.map(\.arguments) == [["2", "10", "1"], ["2", "10", "2"], ["2", "10", "3"]])
        #expect(events.map(\.returnValue) == [11, 99, 13])
        // A variadic prototype needs the types of what to forward.
        #expect(throws: AspectsError.self) {
            try RuleCompiler().compile(try RuleDecoder(source: "t").decode(#"{"symbol":"fx_vsum","prototype":"int fx_vsum(int count, ...)","position":"instead","action":{"return":1}}"#))
        }
    }

    @Test func nameAtVersionSelectsOneVersion() throws {
        let libDir = try Fixture.library("proto_versioned", soname: "fxver",
                                         flags: ["-Wl,--version-script=" + Fixture.path("proto_versioned.map")])
        let bin = try Fixture.build("proto_ver_main", flags: ["-L", libDir, "-lfxver", "-Wl,-rpath," + libDir])
        #expect(try Proc.run(bin).stdout == "ver: 2\nver: 2\n")
        let t = try ScratchTable()
        try t.add(#"{"id":"v2","symbol":"fx_ver@V2","prototype":"int fx_ver(void)","position":"instead","action":{"return":20},"when":{"nth":1}}"#)
        try t.add(#"{"id":"v1","symbol":"fx_ver@V1","prototype":"int fx_ver(void)","position":"instead","action":{"return":10}}"#)
        let r = try Proc.run(bin, environment: Proc.preload(table: t.name))
        #expect(r.stdout == "ver: 20\nver: 2\n", "\(r)")
        let rules = t.table.rules()
        #expect(rules.first { $0.id == "v2" }?.prototypeStatus?.hasPrefix("applied: 1 slot(s)") == true)
        #expect(rules.first { $0.id == "v1" }?.prototypeStatus?.hasPrefix("not applied: no object of pid") == true, "\(rules.map { $0.prototypeStatus ?? "-" })")
        #expect(throws: AspectsError.self) {
            try RuleCompiler().compile(try RuleDecoder(source: "t").decode(#"{"symbol":"open@GLIBC_2.2.5","prototype":"int open(const char *p, int f)","position":"instead","action":{"return":1}}"#))
        }
    }

    @Test func structsByValueInRegistersAndInMemory() throws {
        let t = try ScratchTable()
        try t.add(#"""
        {"rules": [
          {"id": "swap", "symbol": "fx_swap", "prototype": "struct pair fx_swap(struct pair p)",
           "types": {"struct pair": ["double", "double"]}, "position": "after", "action": {"log": true}},
          {"id": "big", "symbol": "fx_bigsum", "prototype": "long fx_bigsum(struct big b)",
           "types": {"struct big": ["long", "long", "long", "long"]}, "position": "instead", "action": {"return": 7}, "when": {"nth": 2}}
        ]}
        """#)
        let (bin, _) = try program(["-fPIE", "-pie"])
        let plain = try Proc.run(bin, ["3"])
        #expect(plain.stdout.contains("swap 2: 0.5 2.0\n"))
        #expect(plain.stdout.contains("big 3: 1113\n"))
        let r = try Proc.run(bin, ["3"], environment: Proc.preload(table: t.name))
        #expect(r.stdout == plain.stdout.replacingOccurrences(of: "big 2: 1112", with: "big 2: 7"), "\(r)")
        let rules = t.table.rules()
        #expect(rules.map(\.fired) == [3, 1])
        #expect(t.table.events(from: 0).events.filter { $0.rule == "swap" }.count == 3)
        // A struct must be declared, and its result is given field by field, not as one number.
        #expect(throws: AspectsError.self) {
            try RuleCompiler().compile(try RuleDecoder(source: "t").decode(#"{"symbol":"fx_swap","prototype":"struct pair fx_swap(struct pair p)","position":"after","action":{"log":true}}"#))
        }
        #expect(throws: AspectsError.self) {
            try RuleCompiler().compile(try RuleDecoder(source: "t").decode(#"{"symbol":"fx_swap","prototype":"struct pair fx_swap(struct pair p)","types":{"struct pair":["double","double"]},"position":"after","action":{"return":1}}"#))
        }
    }

    /// A struct result forged field by field (x86-64 layout: two doubles at 0 and 8), and a
    /// double result from its decimal value.
    @Test func structAndFloatingResultsAreForged() throws {
        let t = try ScratchTable()
        try t.add(#"""
        [{"id": "swap", "symbol": "fx_swap", "prototype": "struct pair fx_swap(struct pair p)",
          "types": {"struct pair": ["double", "double"]}, "position": "instead", "action": {"return": [42.5, -1]}, "when": {"nth": 2}},
         {"id": "scale", "symbol": "fx_scale", "prototype": "double fx_scale(double x, double k)",
          "position": "after", "action": {"return": 0.25}, "when": {"nth": 3}}]
        """#)
        let (bin, _) = try program(["-fPIE", "-pie"])
        let plain = try Proc.run(bin, ["3"])
        let r = try Proc.run(bin, ["3"], environment: Proc.preload(table: t.name))
        let expected = plain.stdout.replacingOccurrences(of: "swap 2: 0.5 2.0", with: "swap 2: 42.5 -1.0")
            .replacingOccurrences(of: "scale 3: 4.50", with: "scale 3: 0.25")
        #expect(r.stdout == expected, "\(r)")
        // The layout: a struct of a char, a double and an int is 24 bytes with padding.
        let c = try RuleCompiler().compile(try RuleDecoder(source: "t").decode(#"""
        {"symbol": "fx_mixed", "prototype": "struct m fx_mixed(void)", "types": {"struct m": ["char", "double", "int"]},
         "position": "instead", "action": {"return": [1, 2.5, -2]}}
        """#))[0]
        var want = [UInt8](repeating: 0, count: 24)
        want[0] = 1
        withUnsafeBytes(of: (2.5).bitPattern.littleEndian) { for (i, b) in $0.enumerated() { want[8 + i] = b } }
        withUnsafeBytes(of: Int32(-2).littleEndian) { for (i, b) in $0.enumerated() { want[16 + i] = b } }
        #expect(c.resultBytes == want)
        // One value per field, each fitting its field.
        for bad in [#"[1, 2.5]"#, #"[1, 2.5, 3, 4]"#, #"[300, 2.5, 1]"#, #"[1, "x", 1]"#] {
            let json = #"{"symbol": "fx_mixed", "prototype": "struct m fx_mixed(void)", "types": {"struct m": ["char", "double", "int"]}, "position": "instead", "action": {"return": \#(bad)}}"#
            #expect(throws: AspectsError.self, "\(bad)") { try RuleCompiler().compile(try RuleDecoder(source: "t").decode(json)) }
        }
    }

    /// A struct result given as an object keyed by the field names the rule declares
    /// (`"double a"`): the same bytes as the list in field order, whatever order it is written in.
    @Test func structResultsAreForgedByFieldName() throws {
        let t = try ScratchTable()
        try t.add(#"""
        [{"id": "swap", "symbol": "fx_swap", "prototype": "struct pair fx_swap(struct pair p)",
          "types": {"struct pair": ["double a", "double b"]}, "position": "instead", "action": {"return": {"b": -1, "a": 42.5}}, "when": {"nth": 2}}]
        """#)
        let (bin, _) = try program(["-fPIE", "-pie"])
        let plain = try Proc.run(bin, ["3"])
        let r = try Proc.run(bin, ["3"], environment: Proc.preload(table: t.name))
        #expect(r.stdout == plain.stdout.replacingOccurrences(of: "swap 2: 0.5 2.0", with: "swap 2: 42.5 -1.0"), "\(r)")
        #expect(t.table.rules()[0].fired == 1)

        func compile(_ types: String, _ result: String) throws -> CompiledRule {
            try RuleCompiler().compile(try RuleDecoder(source: "t").decode(
                #"{"id": "m", "symbol": "fx_mixed", "prototype": "struct m fx_mixed(void)", "types": {"struct m": \#(types)}, "position": "instead", "action": {"return": \#(result)}}"#))[0]
        }
        func failure(_ types: String, _ result: String) -> AspectsError? {
            do { _ = try compile(types, result); return nil } catch let e as AspectsError { return e } catch { return nil }
        }
        let named = #"["char tag", "double value", "int count"]"#
        #expect(try compile(named, #"{"count": -2, "tag": 1, "value": 2.5}"#).resultBytes
                == compile(#"["char", "double", "int"]"#, "[1, 2.5, -2]").resultBytes)
        // A field the struct does not have, one left out, a value that does not fit its field:
        // each names the rule, the field and the fix.
        let unknown = try #require(failure(named, #"{"tag": 1, "value": 2.5, "count": 3, "size": 4}"#))
        #expect(unknown.rule == "rule \"m\"" && unknown.field == "action.return.size", "\(unknown)")
        #expect(unknown.message.contains("struct m has no field \"size\" (its fields: tag, value, count)"), "\(unknown)")
        let missing = try #require(failure(named, #"{"tag": 1, "value": 2.5}"#))
        #expect(missing.field == "action.return" && missing.message.contains("the field \"count\" of struct m is not given"), "\(missing)")
        #expect(missing.fix?.contains(#"give every field: {"tag": …, "value": …, "count": …}"#) == true, "\(missing)")
        let tooBig = try #require(failure(named, #"{"tag": 300, "value": 2.5, "count": 1}"#))
        #expect(tooBig.field == "action.return.tag", "\(tooBig)")
        // Fields declared without names are given in order; an object says how to name them.
        let unnamed = try #require(failure(#"["char", "double", "int"]"#, #"{"tag": 1}"#))
        #expect(unnamed.field == "action.return" && unnamed.message.contains("declared without field names"), "\(unnamed)")
        #expect(unnamed.fix?.contains(#""double re", "double im""#) == true, "\(unnamed)")
        // A name declared twice, and an object for a function that returns no struct.
        let twice = try #require(failure(#"["char a", "double a", "int c"]"#, "[1, 2, 3]"))
        #expect(twice.field == "types.struct m" && twice.message.contains("\"a\" is declared twice"), "\(twice)")
        let scalar = try #require({ () -> AspectsError? in
            do {
                _ = try RuleCompiler().compile(try RuleDecoder(source: "t").decode(
                    #"{"symbol": "fx_add", "prototype": "int fx_add(int a, int b)", "position": "instead", "action": {"return": {"a": 1}}}"#))
                return nil
            } catch let e as AspectsError { return e } catch { return nil }
        }())
        #expect(scalar.message.contains("so its result is one value, not an object"), "\(scalar)")
        // A catalog function's result is one number too (a list was once ignored without a word).
        #expect(throws: AspectsError.self) {
            try RuleCompiler().compile(try RuleDecoder(source: "t").decode(#"{"symbol": "read", "position": "instead", "action": {"return": [1, 2]}}"#))
        }
    }

    @Test func aLibraryDlopenedLaterIsAdvisedToo() throws {
        let t = try ScratchTable()
        try t.add(#"{"symbol":"fx_add","prototype":"int fx_add(int a, int b)","position":"instead","action":{"return":-7},"when":{"after":1}}"#)
        let (bin, libDir) = try program(["-fPIE", "-pie"])
        let userDir = try Fixture.library("proto_user", soname: "fxuser", flags: ["-L", libDir, "-lfx", "-Wl,-rpath," + libDir])
        let r = try Proc.run(bin, ["1", userDir + "/libfxuser.so"], environment: Proc.preload(table: t.name))
        #expect(r.stdout.contains("add 1: 3"))
        #expect(r.stdout.hasSuffix("user: -7\n"), "\(r)")
        #expect(t.table.rules()[0].prototypeStatus?.hasPrefix("applied: 2 slot(s) in 2 object(s)") == true)
        // The same library in a new link-map namespace (dlmopen): rewritten too.
        let ns = try Proc.run(bin, ["1", userDir + "/libfxuser.so", "ns"], environment: Proc.preload(table: t.name))
        #expect(ns.stdout.hasSuffix("user: -7\n"), "\(ns)")
    }

    /// Recursion through the PLT (rec -> rec_step@plt -> rec@plt, one library): each level
    /// is a call of its own, advised and counted — not "part of the running call", which is
    /// what another name of the group reached from the original's object is (an alias chain).
    @Test func recursionThroughThePLTIsAdvisedAtEveryLevel() throws {
        let lib = try Fixture.library("rec_lib", soname: "rec")
        let bin = try Fixture.build("rec_main", flags: ["-L", lib, "-lrec", "-Wl,-rpath," + lib])
        #expect(try Proc.run(bin, ["3"]).stdout == "3\n")
        let t = try ScratchTable()
        try t.add(#"{"id":"r","symbol":"rec","prototype":"int rec(int n)","position":"instead","action":{"return":100},"when":{"nth":3}}"#)
        try t.add(#"{"id":"seen","symbol":"rec","prototype":"int rec(int n)","position":"before","action":{"log":true}}"#)
        let r = try Proc.run(bin, ["3"], environment: Proc.preload(table: t.name))
        // rec(3) = 1 + rec(2) = 1 + 1 + rec(1), and the 3rd call, rec(1), answers 100
        #expect(r.stdout == "102\n", "\(r)")
        let rules = t.table.rules()
        #expect(rules.first { $0.id == "r" }?.matched == 3 && rules.first { $0.id == "seen" }?.matched == 3, "\(rules.map { "\($0.id) \($0.matched)" })")
    }

    /// An alias chain: open64's original reaches open through its own PLT. That is the same
    /// call, advised once — while the program's own call of open is a call of its own.
    @Test func anAliasChainIsOneCall() throws {
        let shim = try Fixture.library("alias_shim", soname: "aliasshim")
        let bin = try Fixture.build("alias_main")
        let t = try ScratchTable()
        try t.add(#"{"id":"o","symbol":"open","position":"before","action":{"log":true},"when":{"args":[{"arg":0,"glob":"/etc/hostname"}]}}"#)
        let r = try Proc.run(bin, [], environment: ["LD_PRELOAD": Paths.library + " " + shim + "/libaliasshim.so", "ASPECTS_TABLE": t.name])
        #expect(r.stdout == "ok ok\n", "\(r)")
        let events = t.table.events(from: 0).events.map(\.symbol)
        #expect(events == ["open64", "open"], "open64 once (its inner open is part of it), then open: \(events)")
    }

    /// Libraries in other namespaces whose ELF header is not at l_addr (FUZZING.md, E1 and
    /// E2): one at its own link-time base (l_addr 0: it was skipped) and a copy of it
    /// relocated elsewhere (the header was read at l_addr: the host died of SIGSEGV, then it
    /// was skipped). Both are rewritten now.
    @Test func librariesLinkedAtAFixedBaseInOtherNamespaces() throws {
        let t = try ScratchTable()
        try t.add(#"{"symbol":"atoi","prototype":"int atoi(const char *s)","position":"instead","action":{"return":77}}"#)
        let dir = try Fixture.library("proto_based", soname: "based", flags: ["-Wl,-Ttext-segment=0x20000000"])
        let copy = dir + "/libbased-copy.so"
        if !FileManager.default.fileExists(atPath: copy) { try? FileManager.default.copyItem(atPath: dir + "/libbased.so", toPath: copy) }
        let bin = try Fixture.build("proto_namespaces", flags: ["-ldl"])
        let plain = try Proc.run(bin, [dir + "/libbased.so", copy])
        #expect(plain.stdout == "5\n5\nmain 3\n", "\(plain)")
        let r = try Proc.run(bin, [dir + "/libbased.so", copy], environment: Proc.preload(table: t.name))
        #expect(r.status == 0 && r.stdout == "77\n77\nmain 77\n", "\(r)")
    }

    /// proto_main in its live mode under a table, answering one line per call.
    func liveProgram() throws -> (table: ScratchTable, live: LiveProcess) {
        let t = try ScratchTable()
        // getppid armed: the advised call on which this program notices table changes.
        try t.add(#"{"symbol":"getppid","position":"before","action":{"log":true},"when":{"nth":1000000000}}"#)
        let (bin, _) = try program(["-fPIE", "-pie"])
        return (t, try LiveProcess(bin, ["live"], table: t.name))
    }

    @Test func aRuleAddedWhileRunningAppliesAndRemovingItRestores() throws {
        let (t, live) = try liveProgram()
        let call = live.call
        #expect(call() == "3 3.00")
        try t.add(#"{"id":"live","symbol":"fx_add","prototype":"int fx_add(int a, int b)","position":"instead","action":{"return":-7}}"#)
        #expect(call() == "-7 3.00")
        try t.table.remove(ids: ["live"])
        #expect(call() == "3 3.00")
        // `list --all` says what became of it (it once said "not applied yet").
        let removed = try #require(t.table.rules(includeRemoved: true).first { $0.id == "live" })
        #expect(removed.state == .removed && removed.symbol == "fx_add", "\(removed)")
        #expect(removed.prototypeStatus == "removed; each process put the original slots back at its next advised call", "\(removed)")
        #expect(try live.finish() == 0)
    }

    /// A prototype entry of the table freed by one symbol and taken by another of another
    /// signature: the process builds the second symbol's stub afresh. (It once kept the first
    /// stub, prepared for (int, int) -> int, and fx_scale then received garbage for its
    /// double arguments.)
    @Test func aPrototypeEntryReusedForAnotherSignatureGetsItsOwnStub() throws {
        let (t, live) = try liveProgram()
        let call = live.call
        #expect(call() == "3 3.00")
        try t.add(#"{"id":"a","symbol":"fx_add","prototype":"int fx_add(int a, int b)","position":"after","action":{"log":true}}"#)
        #expect(call() == "3 3.00")
        try t.table.remove(ids: ["a"])
        try t.add(#"{"id":"s","symbol":"fx_scale","prototype":"double fx_scale(double x, double k)","position":"after","action":{"log":true}}"#)
        #expect(call() == "3 3.00")
        #expect(call() == "3 3.00")
        let s = try #require(t.table.rules().first { $0.id == "s" })
        #expect(s.matched == 2, "\(s)")
        #expect(try live.finish() == 0)
    }

    static let hasSQLite = FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3")

    // .ci/run installs sqlite3 when it is missing; elsewhere this test is skipped, saying why.
    @Test(.tags(.realPrograms), .requires(hasSQLite, "needs sqlite3 (.ci/run installs it)"))
    func sqliteReportsAnErrorWhenItsThirdStepFails() throws {
        let rule = #"{"symbol":"sqlite3_step","prototype":"int sqlite3_step(sqlite3_stmt *stmt)","position":"instead","action":{"return":10},"when":{"nth":3}}"#
        // Step 1 is libsqlite3's own (through its PLT), step 2 the empty select, step 3 the create:
        // the table is never made, and the CLI reports the insert that follows.
        let sql = "select 1 where 0; create table t(x); insert into t values(1); select count(*) from t;"
        let plain = try Proc.run("/usr/bin/sqlite3", [":memory:", sql])
        #expect(plain.stdout == "1\n")
        #expect(plain.status == 0)
        let r = try Proc.aspectctl(["run", "--report", "--rule", rule, "--", "/usr/bin/sqlite3", ":memory:", sql])
        #expect(r.status == 1)
        #expect(r.stderr.contains("Error: in prepare, no such table: t"), "\(r)")
        #expect(r.stderr.contains("r1    sqlite3_step  instead         3      1  active"), "\(r)")
    }

    @Test(.tags(.realPrograms), .requires(hasSQLite, "needs sqlite3 (.ci/run installs it)"))
    func aRuleOnMemcpyDoesNotRecurse() throws {
        let rule = #"{"symbol":"memcpy","prototype":"void *memcpy(void *dest, const void *src, size_t n)","position":"after","action":{"log":true}}"#
        let r = try Proc.aspectctl(["run", "--report", "--rule", rule, "--", "/usr/bin/sqlite3", ":memory:", "select 1;"])
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout == "1\n")
    }

    @Test func preflightNamesTheImportersOfAPrototypeSymbol() throws {
        let (bin, _) = try program(["-fPIE", "-pie"])
        let ok = try Proc.aspectctl(["preflight", bin, "--rule", Self.addRule])
        #expect(ok.status == 0)
        #expect(ok.stdout.contains("note: rule \"add\": fx_add is imported by proto_main-"), "\(ok)")
        let never = try Proc.aspectctl(["preflight", bin, "--rule",
            #"{"id":"x","symbol":"fx_nothing","prototype":"int fx_nothing(void)","position":"instead","action":{"return":1}}"#])
        #expect(never.status == 1)
        #expect(never.stdout.contains("warning: rule \"x\": can never fire: no object of the program imports or defines fx_nothing"))
    }

    @Test func checkAndListShowPrototypeRules() throws {
        let r = try Proc.aspectctl(["check", "--rule", Self.addRule])
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout == "ok  add  instead fx_add  [from its prototype: the GOT slots that import it]\n1 rule(s) valid\n")
        let t = try ScratchTable()
        try t.add(Self.addRule)
        let list = try Proc.aspectctl(["list", "--table", t.name])
        #expect(list.stdout == "add  instead fx_add: return -7  when nth 2  (matched 0, fired 0)  [not applied yet: no process has attached since it was added]\nattached: 0 process(es), 0 running\n")
    }

    @Test(.tags(.fast)) func prototypeRulesAreValidated() throws {
        func error(_ json: String) -> AspectsError? {
            do { _ = try RuleCompiler().compile(try RuleDecoder(source: "t").decode(json)); return nil } catch { return error }
        }
        #expect(error(#"{"symbol":"fx_add","prototype":"int fx_add(int a, struct pair p)","position":"instead","action":{"return":1}}"#)?.code == .badPrototype)
        #expect(error(#"{"symbol":"fx_add","prototype":"int fx_sub(int a, int b)","position":"instead","action":{"return":1}}"#)?.code == .prototypeMismatch)
        let noFailure = error(#"{"symbol":"fx_add","prototype":"int fx_add(int a, int b)","position":"instead","action":{"fail":true}}"#)
        #expect(noFailure?.code == .missingField)
        #expect(noFailure?.field == "failure")
        #expect(error(#"{"symbol":"fx_add","prototype":"int fx_add(int a, int b)","position":"instead","action":{"fail":true},"failure":{"return":-1,"errno":"EIO"}}"#) == nil)
        #expect(error(#"{"symbol":"fx_add","prototype":"int fx_add(int a, int b)","position":"instead","action":{"return":1},"when":{"args":[{"arg":0,"glob":"x"}]}}"#)?.code == .matcherType)
        // One name, one prototype.
        let t = try ScratchTable()
        try t.add(Self.addRule)
        #expect(throws: AspectsError.self) {
            try t.add(#"{"symbol":"fx_add","prototype":"long fx_add(long a)","position":"instead","action":{"return":1}}"#)
        }
    }
}
