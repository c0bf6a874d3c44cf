import CAspectsABI
import Foundation
import AspectsRules
import AspectsTable

/// What runs of a program call: log-only rules before catalog functions, read back from each
/// run's table as call counts (the rules' counters: every call, in every process; per program
/// image from the statistics entries) and call sites (the event ring: the calls it still holds,
/// each put to its image by its pid and time, `ImageResolver`). The rules count with table
/// scope, so each pass logs only the calls of the whole tree after those the previous passes
/// saw (an `after` counted per process skipped that many calls of each process, so a process
/// with fewer was never logged again), and passes together learn every call's site. Explore's
/// baseline runs passes until every site is known; `aspectctl calls` runs one.
///
/// The ring keeps a pass's latest `eventCapacity` calls. When the first pass logged more (a
/// program that allocates millions of times), what it kept of each function is the tail of its
/// calls, and the head is not known: the later passes then log the head window by window,
/// each function at most its share of the ring (`"when": {"after": A, "times": N}`), so that
/// nothing a later pass logs is lost and the windows follow each other. (Logging the same
/// calls again only learned the same tail again: the head's sites were never known.) What no
/// pass reached is `unsurveyed`.
package struct CallSurvey: Sendable {
    package let functions: [String]
    /// libaspects.so's file name, as sites name objects.
    let preloadName: String
    /// function → calls, from the first pass's counters
    package private(set) var totals: [String: UInt64] = [:]
    /// function → calls whose site is known or will not be learned: 0 before the first pass;
    /// then the calls before the window the next pass logs (its rule's `after`)
    var seen: [String: UInt64] = [:]
    /// function → the end of the calls not known yet (1-based, inclusive) after a first pass
    /// that lost events; the calls from `seen + 1` to it are the head the later passes log
    var unknownEnd: [String: UInt64] = [:]
    /// The event ring's size in the passes' tables.
    package var eventCapacity = UInt64(ASPECTS_MAX_EVENT_CAPACITY)
    /// function → site → calls from it
    package private(set) var sites: [String: [CallSite: UInt64]] = [:]
    /// function → program image → calls, from the first pass's statistics entries
    package private(set) var imageCalls: [String: [String: UInt64]] = [:]
    /// function → program image → site → calls from it
    package private(set) var imageSites: [String: [String: [CallSite: UInt64]]] = [:]
    /// The images of the first pass's tree, in exec order.
    package private(set) var images: [ProgramImage] = []
    /// Full paths of programs the tree may run (the command's own image): attachment records
    /// keep only the end of a long path, and these complete it.
    package var knownPrograms: [String] = []
    /// function → the name each call came by (`pwrite64` for the group of `pwrite`) → calls, for
    /// the calls whose events were read
    package private(set) var names: [String: [String: UInt64]] = [:]
    package private(set) var passes = 0
    /// Whether the passes' rules record calling contexts (`explore --strategy context`).
    package var recordContexts = false
    /// function → calling context (ASPECTS_MAX_CONTEXT_DEPTH frames, or fewer where the stack
    /// ends) → calls through it, for the calls whose events recorded one
    package private(set) var contexts: [String: [CallContext: UInt64]] = [:]
    /// function → program image → calling context → calls through it
    private var imageContexts: [String: [String: [CallContext: UInt64]]] = [:]
    /// Events the first pass's ring no longer held when it was read.
    package private(set) var eventsLost: UInt64 = 0

    package init(functions: [String], preload: String) {
        self.functions = functions
        preloadName = Self.siteObject(ofPreload: preload)
    }

    /// libaspects.so's file name, as sites name objects (its real name, through links).
    package static func siteObject(ofPreload path: String) -> String {
        URL(fileURLWithPath: path).resolvingSymlinksInPath().lastPathComponent
    }

    /// The environment of a surveyed run: ours without any advice of its own (the rules come
    /// through the variables ProgramRun sets for the command), with every symbol bound at start.
    package static func environment() -> [String: String] {
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("ASPECTS_") && $0.key != "LD_PRELOAD" }
        env["LD_BIND_NOW"] = "1"
        return env
    }

    /// The functions the next pass logs: every one at first, then those whose calls' sites
    /// are not all known yet.
    package var pending: [String] {
        passes == 0 ? functions : functions.filter { seen[$0, default: 0] < unknownEnd[$0, default: 0] }
    }

    /// function → its calls whose site no pass learned (what the passes run did not reach).
    package var unsurveyed: [String: UInt64] {
        var out: [String: UInt64] = [:]
        for (f, end) in unknownEnd where end > seen[f, default: 0] { out[f] = end - seen[f, default: 0] }
        return out
    }

    /// How many calls of one function a later pass logs: its share of the ring.
    func share(of pending: Int) -> UInt64 { max(1, eventCapacity / UInt64(max(1, pending))) }

    /// The id of the rule on `pending[i]` in a pass.
    package static func ruleID(_ i: Int) -> String { "seen\(i)" }

    /// The next pass's rules as JSON: log before each pending function, after the calls the
    /// earlier passes saw in the whole tree.
    package func rules(for pending: [String]) -> String {
        "[" + pending.enumerated().map { i, f in
            var when: [String] = []
            if passes > 0 {
                let after = seen[f, default: 0]
                if after > 0 { when.append("\"after\":\(after)") }
                when.append("\"times\":\(min(share(of: pending.count), unknownEnd[f, default: 0] - after))")
            }
            return "{\"id\":\"\(Self.ruleID(i))\",\"symbol\":\"\(f)\",\"position\":\"before\",\"action\":{\"log\":true\(recordContexts ? ",\"context\":true" : "")},\"scope\":\"table\""
                + (when.isEmpty ? "}" : ",\"when\":{\(when.joined(separator: ","))}}")
        }.joined(separator: ",") + "]"
    }

    /// Reads a pass's table, whose rules were `rules(for: pending)`.
    package mutating func record(_ table: AdviceTable, pending: [String]) {
        let stats = table.rules()
        let resolver = ImageResolver(table, rules: stats, known: knownPrograms)
        let tally = table.callSites(image: resolver.program(ofPID:at:))
        if passes == 0 { eventsLost = tally.dropped; images = resolver.images }
        for (i, f) in pending.enumerated() {
            let id = Self.ruleID(i)
            if passes == 0, let rule = stats.first(where: { $0.id == id }) {
                totals[f] = rule.matched
                imageCalls[f] = Self.callsByImage(rule, resolver)
            }
            for (image, counts) in tally.imageSites[id, default: [:]] {
                for (site, n) in counts where site.object != preloadName { imageSites[f, default: [:]][image, default: [:]][site, default: 0] += n }
            }
            let held = tally.events[id, default: 0]
            let logged = stats.first(where: { $0.id == id })?.fired ?? held
            // A site in the preload itself is an original's tail call into another advised
            // function (libc's reallocarray jumps to realloc): the program never calls from
            // there, and a site rule on it would not reach the call. k-th call points cover it.
            for (site, n) in tally.sites[id, default: [:]] where site.object != preloadName {
                sites[f, default: [:]][site, default: 0] += n
            }
            for (context, n) in tally.contexts[id, default: [:]] where context.frames[0].object != preloadName {
                contexts[f, default: [:]][context, default: 0] += n
            }
            for (image, counts) in tally.imageContexts[id, default: [:]] {
                for (context, n) in counts where context.frames[0].object != preloadName {
                    imageContexts[f, default: [:]][image, default: [:]][context, default: 0] += n
                }
            }
            for (export, n) in tally.exports[id, default: [:]] where export < table.catalog.functions.count {
                names[f, default: [:]][table.catalog.functions[export].name, default: 0] += n
            }
            if passes == 0 {
                // what the ring kept is the tail: the head, if any, is the later passes' to log
                unknownEnd[f] = logged > held ? logged - held : 0
                seen[f] = 0
            } else if held >= logged && logged > 0 {
                seen[f, default: 0] += logged // the window, whole: the next one follows it
            } else {
                seen[f] = unknownEnd[f, default: 0] // lost even within its share, or nothing logged: no progress to make
            }
        }
        passes += 1
    }

    /// A rule's calls per program image: its statistics entries by the image they name; the
    /// calls of processes that found no free entry (counted in the rule's own words) under "".
    static func callsByImage(_ rule: TableRule, _ resolver: ImageResolver) -> [String: UInt64] {
        var out: [String: UInt64] = [:]
        var named: UInt64 = 0
        for p in rule.byProcess where p.matched > 0 {
            out[resolver.program(ofPID: p.pid, image: p.image), default: 0] &+= p.matched
            named &+= p.matched
        }
        if rule.matched > named { out["", default: 0] &+= rule.matched - named }
        return out
    }

    /// Per function: its calls and their sites, in the whole tree and per program image.
    package var profiles: [FunctionProfile] {
        functions.map { f in
            let perImage = imageCalls[f] ?? [:]
            let images = Set(perImage.keys).union(imageSites[f]?.keys ?? [:].keys).union(imageContexts[f]?.keys ?? [:].keys)
            return FunctionProfile(function: f, calls: totals[f, default: 0], sites: sites[f] ?? [:],
                                   images: Dictionary(uniqueKeysWithValues: images.map {
                                       ($0, ImageCalls(calls: perImage[$0, default: 0], sites: imageSites[f]?[$0] ?? [:],
                                                       contexts: imageContexts[f]?[$0] ?? [:]))
                                   }), contexts: contexts[f] ?? [:])
        }
    }
}
