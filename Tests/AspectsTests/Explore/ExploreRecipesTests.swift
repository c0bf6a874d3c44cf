import Foundation
import Testing

/// docs/ci.md's recipes for a campaign over many machines: the YAML files parse and run the
/// campaign's commands as the page states them, and the GNU parallel recipe, run for real on a
/// fixture program, merges into the unsharded campaign's report.
@Suite(.serialized, .tags(.realPrograms)) struct ExploreRecipesTests {
    static let page = (try? String(contentsOfFile: Paths.root + "/docs/ci.md", encoding: .utf8)) ?? ""
    static let python = ["/usr/bin/python3", "/usr/local/bin/python3"].first { FileManager.default.isExecutableFile(atPath: $0) }
    static let parallel = ["/usr/bin/parallel", "/usr/local/bin/parallel"].first { FileManager.default.isExecutableFile(atPath: $0) }
    static let hasYAML = python.map { (try? Proc.run($0, ["-c", "import yaml"]))?.status == 0 } ?? false

    /// The page's statement of the campaign: the indented explore and merge lines.
    static func stated(_ prefix: String) -> String? {
        page.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.first { $0.hasPrefix(prefix) }
    }

    /// A command line in the form the page states it: from `aspectctl` on, before `||` or
    /// `:::`, each engine's shard number written I, and files by their names only.
    static func normalized(_ line: String) -> String {
        var s = line
        for shard in ["${{ matrix.shard }}", "$((JOB_COMPLETION_INDEX+1))", "$I", "{}"] { s = s.replacingOccurrences(of: shard, with: "I") }
        if let r = s.range(of: "aspectctl ") { s = String(s[r.lowerBound...]) }
        for end in ["||", ":::"] { if let r = s.range(of: end) { s = String(s[..<r.lowerBound]) } }
        var words = s.split(separator: " ").map(String.init)
        for k in words.indices.dropFirst() where ["--out", "--json", "--junit"].contains(words[k - 1]) || words[k].hasSuffix(".json") {
            words[k] = (words[k] as NSString).lastPathComponent
        }
        return words.joined(separator: " ")
    }

    /// Each YAML file's documents as JSON, with the lines of its scripts that run aspectctl.
    static let reader = #"""
    import json, sys, yaml
    def lines(node):
        if isinstance(node, dict):
            for v in node.values(): yield from lines(v)
        elif isinstance(node, list):
            for v in node: yield from lines(v)
        elif isinstance(node, str):
            for l in node.splitlines():
                if "aspectctl explore" in l: yield l.strip()
    out = {}
    for path in sys.argv[1:]:
        docs = list(yaml.safe_load_all(open(path)))
        out[path.rsplit("/", 1)[-1]] = {"docs": json.loads(json.dumps(docs, default=str)), "lines": [l for d in docs for l in lines(d)]}
    print(json.dumps(out))
    """#

    @Test(.requires(hasYAML, "needs python3 with yaml (python3-yaml)"))
    func theYAMLRecipesParseAndRunTheStatedCommands() throws {
        let explore = try #require(Self.stated("aspectctl explore --shard"), "docs/ci.md states the shard's command")
        let merge = try #require(Self.stated("aspectctl explore merge"), "docs/ci.md states the merge")
        let dir = Paths.root + "/docs/ci/"
        let files = ["github-actions.yml", "k8s-indexed-job.yml", "k8s-merge-job.yml"]
        for f in files { #expect(Self.page.contains("(ci/\(f))"), "docs/ci.md links \(f)") }
        let script = NSTemporaryDirectory() + "aspects-recipes-\(UUID().uuidString).py"
        try Self.reader.write(toFile: script, atomically: false, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: script) }
        let r = try Proc.run(try #require(Self.python), [script] + files.map { dir + $0 })
        try #require(r.status == 0, "the YAML files parse: \(r.stderr)")
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: [String: Any]])
        func lines(_ f: String) -> [String] { parsed[f]?["lines"] as? [String] ?? [] }
        func docs(_ f: String) -> [[String: Any]] { parsed[f]?["docs"] as? [[String: Any]] ?? [] }

        // GitHub Actions: four shard jobs of a matrix, and a merge job after them.
        let jobs = try #require(docs("github-actions.yml").first?["jobs"] as? [String: [String: Any]])
        let shardJob = try #require(jobs.values.first { ($0["strategy"] as? [String: Any]).flatMap { $0["matrix"] as? [String: Any] }?["shard"] != nil })
        #expect(((shardJob["strategy"] as? [String: Any])?["matrix"] as? [String: Any])?["shard"] as? [Int] == [1, 2, 3, 4])
        let mergeJob = try #require(jobs.first { $0.key != "explore" }?.value)
        #expect(mergeJob["needs"] as? String == "explore")
        #expect(lines("github-actions.yml").map(Self.normalized) == [explore, merge].map(Self.normalized), "\(lines("github-actions.yml"))")
        #expect(lines("github-actions.yml").first?.contains("--shard ${{ matrix.shard }}/4") == true)

        // Kubernetes: an Indexed Job of 4 completions, pod k running shard k+1; then the merge.
        let job = try #require(docs("k8s-indexed-job.yml").first)
        let spec = try #require(job["spec"] as? [String: Any])
        #expect(job["kind"] as? String == "Job" && spec["completionMode"] as? String == "Indexed" && spec["completions"] as? Int == 4)
        #expect(lines("k8s-indexed-job.yml").map(Self.normalized) == [Self.normalized(explore)], "\(lines("k8s-indexed-job.yml"))")
        let k8sScript = "\(spec)"
        #expect(k8sScript.contains("I=$((JOB_COMPLETION_INDEX+1))") && lines("k8s-indexed-job.yml").first?.contains("--shard $I/4") == true)
        #expect(lines("k8s-merge-job.yml").map(Self.normalized) == [Self.normalized(merge)])
    }

    /// The GNU parallel recipe of docs/ci.md, its two lines as the page has them with the
    /// fixture program in place of ./app: the merged report is the unsharded campaign's.
    @Test(.requires(parallel != nil, "needs GNU parallel (Debian's parallel, which .ci/run installs)"))
    func theGNUParallelRecipeMergesIntoTheUnshardedCampaign() throws {
        let bin = try Fixture.build("explore_bugs", flags: ["-g", "-O0"])
        let program = "./app --db test.db", fixture = "\(bin) same"
        let blockStart = try #require(Self.page.range(of: "```sh\nparallel aspectctl explore"), "docs/ci.md has the GNU parallel block")
        let rest = Self.page[blockStart.upperBound...]
        let body = "parallel aspectctl explore" + String(rest[..<(rest.range(of: "```")?.lowerBound ?? rest.endIndex)])
        #expect(body.contains(program))
        let script = body.replacingOccurrences(of: program, with: fixture)
        let (dir, cleanup) = ExploreScaleTests.scratch()
        defer { cleanup() }
        let env: [String: String?] = ["PATH": (Paths.aspectctl as NSString).deletingLastPathComponent + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"),
                                      "ASPECTS_PRELOAD": Paths.library]
        let merged = try Proc.run("/bin/bash", ["-c", script], environment: env, directory: dir)
        // The unsharded campaign: the recipe's explore line without its shard.
        let line = Self.normalized(try #require(Self.stated("aspectctl explore --shard")))
        var words = line.split(separator: " ").map(String.init).dropFirst(2).map { $0 }
        for option in ["--shard", "--out", "--json"] { if let k = words.firstIndex(of: option) { words.removeSubrange(k...(k + 1)) } }
        let command = words.joined(separator: " ").replacingOccurrences(of: program, with: fixture).split(separator: " ").map(String.init)
        let whole = try Proc.run(Paths.aspectctl, ["explore", "--out", dir + "/whole", "--json", dir + "/whole.json"] + command,
                                 environment: ["ASPECTS_PRELOAD": Paths.library], directory: dir)
        #expect(whole.status == 1, "\(whole)")
        #expect(merged.status == whole.status, "the merge's status is the campaign's: \(merged)")
        for i in 1...4 { #expect(FileManager.default.fileExists(atPath: dir + "/shard-\(i).json"), "shard \(i) wrote its report: \(merged)") }
        #expect(try ExploreScaleTests.verdict(dir + "/explore.json") == (try ExploreScaleTests.verdict(dir + "/whole.json")))
        #expect(FileManager.default.fileExists(atPath: dir + "/explore.xml"))
    }
}
