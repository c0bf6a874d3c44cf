#if canImport(Glibc)
import Glibc
#endif
import Foundation
import AspectsCore
import AspectsRules

/// A fault campaign from a Swift test: `aspectctl explore` fails each call of the functions in
/// turn, one per run, and the test gets the bugs it found, typed:
///
///     let c = try Aspects.explore(["./app", "--once"], functions: ["malloc"])
///     #expect(c.crashes.isEmpty, "\(c.bugs.map(\.signature))")
///
/// It drives the aspectctl binary (`$ASPECTCTL`, the one `swift build` put beside this
/// package's products, or on PATH) and reads its `--json` (config/explore.schema.json), so a
/// campaign from a test is exactly the campaign of the command line, reproducers included.
extension Aspects {
    /// What a campaign found.
    public struct Campaign: Sendable {
        /// 0 no findings, 1 findings.
        public var status: Int32
        /// The findings, told apart by their cause: crashes first.
        public var bugs: [Bug]
        /// Runs per outcome (outcomes no run had are left out).
        public var outcomes: [ExploreOutcome: Int]
        /// How many runs the campaign made.
        public var runs: Int
        /// The directory of the reproducers (`--out`).
        public var out: String
        /// aspectctl's report, as a terminal shows it.
        public var text: String
        /// The whole campaign as explore's `--json` wrote it.
        public var json: JSONNode

        /// The bugs that are crashes.
        public var crashes: [Bug] { bugs.filter { $0.outcome == .crash } }
    }

    /// One bug: the findings of one cause.
    public struct Bug: Sendable {
        /// crash, hang, checkFailed or silentDifference.
        public var outcome: ExploreOutcome
        /// A crash's signal and where it crashed (`SIGSEGV in fill_record (bugs.c:24)`), else its
        /// symptom (`prog: exit 0; the check failed; stderr: "…"`).
        public var signature: String
        /// The crashing thread's frames, innermost first (empty for hangs and check failures).
        public var stack: [Frame]
        /// The fault points that reach it, in run order.
        public var faultPoints: [FaultPoint]
        /// The rules file that reproduces it.
        public var reproducer: String?
        /// The shell line that reproduces it.
        public var reproduce: String?
        /// A crash a handler of the program's caught and exited from (m4's "internal error
        /// detected"): a crash all the same, its stack recorded before the handler ran.
        public var caughtByHandler = false
    }

    /// A frame of a crash's stack.
    public struct Frame: Sendable {
        /// The object's file name, and the offset in it (`0x11e0`).
        public var object: String
        public var offset: String
        public var symbol: String?
        public var file: String?
        public var line: Int?
    }

    /// A fault point of a bug: which call failed, and how.
    public struct FaultPoint: Sendable {
        /// The run's index in the campaign.
        public var run: Int
        /// Its stable name (`git:write@git+0x1a2b#3/error/EIO`).
        public var name: String
        /// The executable whose calls it counted, over the whole process tree.
        public var image: String
        public var function: String
        /// The call site (`object+0xOFFSET`), nil for a k-th call of the image.
        public var site: String?
        /// The call that failed (counted at the site when there is one).
        public var nth: Int
        /// The errno injected (nil for a short transfer).
        public var errno: String?
        public var fault: FaultKind
    }

    /// aspectctl explore refused or failed: its exit status and its words. Status 2 is a
    /// campaign that tested nothing (no run was planned, or `strict` and the baselines differ),
    /// which a test must never take for a pass.
    public struct ExploreError: Error, CustomStringConvertible {
        public var status: Int32
        public var message: String
        public var description: String { "aspectctl explore exited \(status): \(message)" }
    }

    /// Runs a campaign on `argv` (explore's options are the arguments, `aspectctl explore
    /// --help`; `hangTimeout` is its `--timeout`) and returns its bugs. Reproducers go to
    /// `out`, by default a new temporary directory that stays for the test to read.
    public static func explore(_ argv: [String], functions: [String] = [], families: [String] = [], faults: [FaultKind] = [],
                               errnos: [String] = [], processes: [String] = [], strategy: FaultPointStrategy? = nil, setup: String? = nil,
                               check: String? = nil, maxRuns: Int? = nil, jobs: Int? = nil, hangTimeout: Double? = nil,
                               seed: UInt64? = nil, strict: Bool = false, out: String? = nil, junit: String? = nil,
                               environment: [String: String] = [:]) throws -> Campaign {
        let ownOut = out == nil
        let out = out ?? NSTemporaryDirectory() + "\(defaultOutPrefix)\(UUID().uuidString)"
        let json = NSTemporaryDirectory() + "aspects-explore-\(UUID().uuidString).json"
        defer { try? FileManager.default.removeItem(atPath: json) }
        var args = ["explore", "--out", out, "--json", json, "--progress", "never"]
        for (flag, values) in [("--function", functions), ("--family", families), ("--fault", faults.map(\.rawValue)), ("--errno", errnos), ("--process", processes)] {
            for v in values { args += [flag, v] }
        }
        let options: [(String, String?)] = [("--strategy", strategy?.rawValue), ("--setup", setup), ("--check", check),
                                            ("--max-runs", maxRuns.map(String.init)), ("-j", jobs.map(String.init)),
                                            ("--timeout", hangTimeout.map { String($0) }), ("--seed", seed.map(String.init)),
                                            ("--junit", junit)]
        for case let (flag, value?) in options { args += [flag, value] }
        if strict { args.append("--strict") }
        let r = try runAspectctl(args + ["--"] + argv, environment: environment)
        guard r.status == 0 || r.status == 1 else {
            // A directory of its own choosing holds nothing worth keeping from a refusal.
            if ownOut { try? FileManager.default.removeItem(atPath: out) }
            let said = r.stderr.split(separator: "\n").filter { $0.hasPrefix("aspectctl") }.joined(separator: "\n")
            throw ExploreError(status: r.status, message: said.isEmpty ? r.stderr : said)
        }
        let root = try JSONParser.parse(try String(contentsOfFile: json, encoding: .utf8))
        var outcomes: [ExploreOutcome: Int] = [:]
        if case .object(let counts)? = root["outcomes"]?.value {
            for (key, n) in counts { if let o = ExploreOutcome(rawValue: key), let k = int(n), k > 0 { outcomes[o] = k } }
        }
        return Campaign(status: r.status, bugs: array(root["bugs"]).compactMap(bug), outcomes: outcomes,
                        runs: array(root["runs"]).count, out: out, text: r.stdout, json: root)
    }

    /// The name a campaign's own `--out` directory starts with, in the temporary directory.
    static let defaultOutPrefix = "aspects-testing-explore-"

    static func bug(_ n: JSONNode) -> Bug? {
        guard let outcome = string(n["outcome"]).flatMap(ExploreOutcome.init(rawValue:)), let signature = string(n["signature"]) else { return nil }
        let stack = array(n["stack"]).map { f in
            Frame(object: string(f["object"]) ?? "", offset: string(f["offset"]) ?? "", symbol: string(f["symbol"]),
                  file: string(f["file"]), line: f["line"].flatMap(int))
        }
        let points = array(n["faultPoints"]).map { p in
            FaultPoint(run: p["run"].flatMap(int) ?? 0, name: string(p["name"]) ?? "", image: string(p["image"]) ?? "", function: string(p["function"]) ?? "", site: string(p["site"]),
                       nth: p["nth"].flatMap(int) ?? 0, errno: string(p["errno"]),
                       fault: string(p["fault"]).flatMap(FaultKind.init(rawValue:)) ?? .error)
        }
        return Bug(outcome: outcome, signature: signature, stack: stack, faultPoints: points,
                   reproducer: string(n["reproducer"]), reproduce: string(n["reproduce"]),
                   caughtByHandler: n["caughtByHandler"]?.value == .bool(true))
    }

    static func string(_ n: JSONNode?) -> String? { if case .string(let s)? = n?.value { return s }; return nil }
    static func int(_ n: JSONNode) -> Int? { if case .number(let t) = n.value { return Int(t) }; return nil }
    static func array(_ n: JSONNode?) -> [JSONNode] { if case .array(let a)? = n?.value { return a }; return [] }

    /// The aspectctl a test drives: `$ASPECTCTL`, the one built beside this package's
    /// products (.build/debug or release), or the one on PATH.
    public static func aspectctl() throws -> String {
        if let e = ProcessInfo.processInfo.environment["ASPECTCTL"], !e.isEmpty { return e }
        for candidate in [Preload.packageRoot + "/.build/debug/aspectctl", Preload.packageRoot + "/.build/release/aspectctl"]
            where access(candidate, X_OK) == 0 {
            return candidate
        }
        do { return try ProgramPath.resolve("aspectctl") } catch {
            throw ExploreError(status: 127, message: "aspectctl is not on PATH and not built beside this package: install aspects (docs/install.md) or set ASPECTCTL to its path")
        }
    }

    static func runAspectctl(_ args: [String], environment: [String: String]) throws -> (status: Int32, stdout: String, stderr: String) {
        return try runToEnd(try aspectctl(), args, environment: ProcessInfo.processInfo.environment.merging(environment) { $1 }, input: nil)
    }
}
