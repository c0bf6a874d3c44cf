import Foundation
import AspectsRules

/// What a campaign could and could not reach, said before the plan: a named function the
/// program never called gives no run at all, and calls libc makes inside stdio cannot be failed
/// by any interposer. Both used to pass silently as "no findings".
package struct ExploreCoverage: Sendable {
    /// One function of the campaign as the baseline saw it.
    package struct Function: Sendable {
        package var function: String
        package var calls: UInt64
        package var sites: Int
        /// For a function never called: the other members of its family the program did call,
        /// by the names it called them (`pwrite64`), with their calls.
        package var familyCalls: [(name: String, calls: UInt64)] = []
        package var family: String?
        /// The calling contexts seen at the campaign's depth, as a report read back carries
        /// them (its profiles keep no contexts); a campaign's own counts them from its profiles.
        package var contexts: Int?
    }

    package var functions: [Function] = []

    /// One program image of the baseline's tree: fault points count calls per image.
    package struct Image: Sendable, Equatable {
        package var path: String
        package var processes: Int
        /// Calls of the campaign's functions.
        package var calls: UInt64
        /// false: left out by --process.
        package var planned: Bool
    }

    /// The images in exec order.
    package var images: [Image] = []
    /// The lines said before the plan, in order.
    package var notes: [String] = []

    package init() {}

    /// The functions stdio reaches inside libc: faults on them fail only the program's direct
    /// calls. By family, and `close` and `lseek`, which fclose and fseek make.
    static let stdioBacked: Set<String> = ["read", "write", "open", "close", "lseek"]
    /// stdio functions a program may import; those the catalog has are the ones to name.
    static let stdioNames = ["fopen", "fopen64", "fdopen", "freopen", "fread", "fgets", "fgetc", "getc", "getline", "getdelim",
                             "fscanf", "scanf", "fwrite", "fputs", "fputc", "putc", "puts", "putchar", "printf", "fprintf",
                             "vfprintf", "vprintf", "fflush", "fseek", "fseeko", "ftell", "fclose"]

    /// The coverage of `chosen` after the baseline: `profiles` holds every surveyed function
    /// (the chosen ones and their family companions), `names` the names calls came by, and
    /// `imports` the program's own imported symbols (nil when it is not an ELF program). Each
    /// function `named` by --function that was never called gets its line; the others
    /// (--imported, --family) never called share one, since most of what a program imports
    /// goes uncalled in any one run.
    package static func make(chosen: [String], named: [String], profiles: [FunctionProfile], names: [String: [String: UInt64]],
                            imports: Set<String>?, catalog: Catalog) -> ExploreCoverage {
        var c = ExploreCoverage()
        let namedGroups = Set(named.compactMap { catalog.function(named: $0)?.groupIndex })
        var uncalled: [String] = []
        let byFunction = Dictionary(profiles.map { ($0.function, $0) }, uniquingKeysWith: { a, _ in a })
        for f in chosen {
            let p = byFunction[f]
            var entry = Function(function: f, calls: p?.calls ?? 0, sites: p?.sites.count ?? 0)
            if entry.calls == 0 {
                entry.family = catalog.function(named: f).flatMap { catalog.family(of: $0) }
                if let family = entry.family {
                    let chosenSet = Set(chosen)
                    entry.familyCalls = (catalog.families[family] ?? []).filter { !chosenSet.contains($0) }.flatMap { m -> [(name: String, calls: UInt64)] in
                        let called = names[m] ?? [:]
                        if called.isEmpty, let n = byFunction[m]?.calls, n > 0 { return [(m, n)] }
                        return called.filter { $0.value > 0 }.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
                    }
                }
                if let g = catalog.function(named: f)?.groupIndex, namedGroups.contains(g) {
                    c.notes.append(neverCalledNote(entry))
                } else {
                    uncalled.append(f)
                }
            }
            c.functions.append(entry)
        }
        if !uncalled.isEmpty { c.notes.append("never called in the baseline, so not tested: " + uncalled.joined(separator: ", ")) }
        if let imports, let note = stdioNote(chosen: chosen, imports: imports, catalog: catalog) { c.notes.append(note) }
        return c
    }

    /// Adds the images of the baseline's tree (`images`, in exec order) with the calls
    /// `profiles` made in each, and says which `--process` left out, and the calls no image
    /// record names (they cannot be planned: a point counts one image's calls).
    package mutating func addImages(_ images: [ProgramImage], profiles: [FunctionProfile], processes: [String]) {
        func calls(_ path: String) -> UInt64 { profiles.reduce(UInt64(0)) { $0 &+ ($1.images[path]?.calls ?? 0) } }
        self.images = images.map { Image(path: $0.path, processes: $0.processes, calls: calls($0.path),
                                         planned: ExplorePlan.includes(image: $0.path, processes: processes)) }
        let out = self.images.filter { !$0.planned }
        if !out.isEmpty {
            notes.append("left out by --process: " + out.map { "\($0.path) (\($0.processes) process(es), \($0.calls) call(s))" }.joined(separator: ", "))
        }
        let unnamed = calls("")
        if unnamed > 0 {
            notes.append("\(unnamed) call(s) came from processes no attachment record names (the table's records were full), so no fault point counts them")
        }
    }

    /// Says which functions' calls the survey's passes could not all log with their site: the
    /// calls past what 16 passes of the event ring hold. A `site` point cannot name a site not
    /// seen; a point by call number (`--strategy nth`) reaches those calls all the same.
    package mutating func addUnsurveyed(_ unsurveyed: [String: UInt64], profiles: [FunctionProfile]) {
        let calls = Dictionary(profiles.map { ($0.function, $0.calls) }, uniquingKeysWith: { a, _ in a })
        let left = unsurveyed.filter { $0.value > 0 && calls[$0.key] != nil }.sorted { $0.key < $1.key }
        guard !left.isEmpty else { return }
        notes.append("sites not learned for " + left.map { "\($0.key): \($0.value) of \(calls[$0.key]!) calls" }.joined(separator: ", ")
                     + " (more calls than the survey's passes log: their sites are not planned; --strategy nth reaches them by number)")
    }

    /// `write: never called; it calls pwrite64 ×12 — try --function pwrite64 or --family write`
    static func neverCalledNote(_ f: Function) -> String {
        guard let family = f.family else { return "\(f.function): never called in the baseline: no run can fail it" }
        guard !f.familyCalls.isEmpty else {
            return "\(f.function): never called in the baseline, nor any other of the \(family) family: no run can fail it"
        }
        let calls = f.familyCalls.map { "\($0.name) ×\($0.calls)" }.joined(separator: ", ")
        let names = f.familyCalls.map { "--function \($0.name)" }.joined(separator: " ")
        return "\(f.function): never called; it calls \(calls) — try \(names) or --family \(family)"
    }

    /// The line on stdio, when the program imports stdio functions and a chosen function is
    /// one stdio calls inside libc.
    static func stdioNote(chosen: [String], imports: Set<String>, catalog: Catalog) -> String? {
        let backed = chosen.filter { name in
            guard let f = catalog.function(named: name) else { return false }
            return stdioBacked.contains(name) || catalog.family(of: f).map(stdioBacked.contains) == true
        }
        let used = stdioNames.filter(imports.contains)
        guard !backed.isEmpty, !used.isEmpty else { return nil }
        let chosenGroups = Set(chosen.compactMap { catalog.function(named: $0)?.groupIndex })
        let nameable = used.filter { catalog.function(named: $0).map { !chosenGroups.contains($0.groupIndex) } == true }
        let others = used.filter { catalog.function(named: $0) == nil }
        var s = "the program uses stdio (\(used.joined(separator: ", "))): the \(backed.joined(separator: "/")) calls libc makes inside it cannot be failed (no interposer reaches calls within libc)"
        if !nameable.isEmpty { s += "; to fail its stdio, name " + nameable.map { "--function \($0)" }.joined(separator: " ") }
        if !others.isEmpty { s += "; \(others.joined(separator: ", ")) \(others.count == 1 ? "is" : "are") not in the catalog: what \(others.count == 1 ? "it does" : "they do") cannot be failed" }
        return s
    }

    /// The members of the families of `chosen` that are not chosen themselves: the baseline
    /// counts their calls too, so that a never-called function can be told what to name.
    package static func familyCompanions(of chosen: [String], catalog: Catalog) -> [String] {
        let groups = Set(chosen.compactMap { catalog.function(named: $0)?.groupIndex })
        var seen = groups, out: [String] = []
        for name in chosen {
            guard let f = catalog.function(named: name), let family = catalog.family(of: f) else { continue }
            for m in catalog.families[family] ?? [] {
                guard let g = catalog.function(named: m)?.groupIndex, seen.insert(g).inserted else { continue }
                out.append(m)
            }
        }
        return out
    }
}
