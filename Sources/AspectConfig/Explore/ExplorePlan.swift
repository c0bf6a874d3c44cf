/// What the baseline run saw of one function: how often it was called, and from where.
public struct FunctionProfile: Sendable, Equatable {
    public var function: String
    /// Calls in the whole process tree.
    public var calls: UInt64
    /// Each call site seen, with the calls made from it.
    public var sites: [CallSite: UInt64]
    /// Each calling context seen (a survey that records them: `--strategy context`), with the
    /// calls made through it; contexts are as deep as the preload records them.
    public var contexts: [CallContext: UInt64]

    public init(function: String, calls: UInt64, sites: [CallSite: UInt64], contexts: [CallContext: UInt64] = [:]) {
        self.function = function
        self.calls = calls
        self.sites = sites
        self.contexts = contexts
    }

    /// The contexts cut to `depth` frames, calls through each summed.
    public func contexts(depth: Int) -> [CallContext: UInt64] {
        contexts.reduce(into: [:]) { $0[$1.key.prefix(depth), default: 0] += $1.value }
    }
}

/// How a fault point fails its call (`explore --fault`).
public enum FaultKind: String, Sendable, CaseIterable, Hashable {
    /// The call fails with the errno, once, where the catalog says its failure happens.
    case error
    /// The call transfers a seeded part of its count (the `"short"` data fault): a partial
    /// transfer the caller must continue. Only for functions whose catalog `faults:` allow it.
    case short
    /// The call and every later one fail, as a full disk stays full.
    case persistent

    /// Whether it applies to `function`: short needs a count the catalog can cut.
    public func applies(to function: String, in catalog: Catalog) -> Bool {
        guard self == .short else { return true }
        return catalog.function(named: function).map { catalog.group(of: $0).faults.contains(.short) } ?? false
    }
}

/// One fault of a campaign: the call that fails, and how.
public struct FaultPoint: Hashable, Sendable, CustomStringConvertible {
    public enum Strategy: String, Sendable, CaseIterable { case sites, nth, both, context }

    public var function: String
    /// With a site, `nth` counts the calls from that site only.
    public var site: CallSite?
    /// A context point's calling context, the site first (`--strategy context`); `nth` counts
    /// the calls made through it only.
    public var context: [CallSite]?
    /// The call that fails (persistent: the first of the calls that fail).
    public var nth: UInt64
    /// The error injected; empty for a short transfer, which reports none.
    public var errno: String
    public var kind: FaultKind

    public init(function: String, site: CallSite?, nth: UInt64, errno: String, kind: FaultKind = .error) {
        self.function = function
        self.site = site
        self.nth = nth
        self.errno = errno
        self.kind = kind
    }

    /// What the fault does to its call, as reports say it: "fails with EIO".
    public var effect: String {
        switch kind {
        case .error: return "fails with \(errno)"
        case .persistent: return "and every later call fail with \(errno)"
        case .short: return "transfers short"
        }
    }

    public var description: String {
        if let context { return "\(function) via \(CallContext(context)), call \(nth) \(effect)" }
        return (site.map { "\(function) from \($0), call \(nth)" } ?? "\(function) call \(nth)") + " " + effect
    }

    /// The rule that makes this fault, on exactly that call (persistent: from that call on).
    /// An error leaves "position" out, so the catalog puts it where the function's real
    /// failure happens: after a close ran (the descriptor released), instead of a write. The
    /// same JSON goes into the run's table and into the reproducer.
    public var ruleJSON: String {
        var when = [kind == .persistent ? (nth > 1 ? "\"after\":\(nth - 1)" : nil) : "\"nth\":\(nth)"].compactMap { $0 }
        if let site { when.insert("\"site\":\"\(site)\"", at: 0) }
        if let context { when.insert("\"context\":\(CallContext(context).ruleJSON)", at: 0) }
        // A short transfer's cut is drawn from the rule's seed: a fixed one, so that the
        // reproducer cuts the same count.
        if kind == .short { when.append("\"seed\":1") }
        let how = kind == .short ? "\"position\":\"before\",\"action\":{\"short\":true}" : "\"action\":{\"fail\":\"\(errno)\"}"
        return "{\"id\":\"explore\",\"symbol\":\"\(function)\",\(how),\"when\":{\(when.joined(separator: ","))}}"
    }
}

/// The faults of a campaign, in the order they run: the same profile, options and seed give the
/// same plan.
public struct ExplorePlan: Sendable, Equatable {
    public var points: [FaultPoint]
    /// Fault points the strategy named (before the budget), and whether `nth` points were
    /// spread out to fit the budget (then the report says so).
    public var candidates: Int
    public var spread: Bool
    /// More sites than runs: the sites taken round-robin over the functions (each function's
    /// first site, then each one's second, ...), so no function is left out for the alphabet.
    public var sitesSampled = false

    /// - errnos: for each function, the codes to inject (the function's default when the user
    ///   named none it can produce).
    /// - kinds: for each function, the fault kinds that apply to it (`--fault`, FaultKind.applies).
    public static func make(profiles: [FunctionProfile], strategy: FaultPoint.Strategy, errnos: (String) -> [String],
                            kinds: (String) -> [FaultKind] = { _ in [.error] }, maxRuns: Int, seed: UInt64,
                            contextDepth: Int = 3) -> ExplorePlan {
        let ordered = profiles.filter { $0.calls > 0 }.sorted { $0.function < $1.function }
        /// Each way one call of `function` fails: a kind with each errno (a short transfer has none).
        func variants(_ function: String) -> [(kind: FaultKind, errno: String)] {
            kinds(function).flatMap { k in k == .short ? [(k, "")] : errnos(function).map { (k, $0) } }
        }
        if strategy == .context {
            return contextPlan(ordered, depth: contextDepth, variants: variants, maxRuns: maxRuns)
        }
        var points: [FaultPoint] = []
        var candidates = 0
        var sitesSampled = false
        if strategy != .nth {
            let perFunction = ordered.map { p in
                p.sites.keys.sorted().flatMap { site in variants(p.function).map { FaultPoint(function: p.function, site: site, nth: 1, errno: $0.errno, kind: $0.kind) } }
            }
            let all = perFunction.flatMap { $0 }
            candidates += all.count
            if all.count <= maxRuns {
                points = all
            } else {
                sitesSampled = true
                var taken = Set<FaultPoint>()
                var round = 0
                while taken.count < maxRuns {
                    for list in perFunction where round < list.count && taken.count < maxRuns { taken.insert(list[round]) }
                    round += 1
                }
                points = all.filter { taken.contains($0) } // in plan order: function, site, errno
            }
        }
        var spread = false
        if strategy != .sites {
            let pairs = ordered.flatMap { p in variants(p.function).map { (profile: p, kind: $0.kind, errno: $0.errno) } }
            let wanted = pairs.map { $0.profile.calls }
            candidates += Int(clamping: wanted.reduce(0, &+))
            var budget = max(0, maxRuns - points.count)
            // Equal shares, a pair that needs less than its share leaves the rest to the others.
            var share = [UInt64](repeating: 0, count: pairs.count)
            var open = Array(pairs.indices)
            while budget > 0 && !open.isEmpty {
                let each = max(1, budget / open.count)
                var next: [Int] = []
                for i in open where budget > 0 {
                    let give = min(UInt64(each), wanted[i] - share[i], UInt64(budget))
                    share[i] += give
                    budget -= Int(give)
                    if share[i] < wanted[i] { next.append(i) }
                }
                open = next
            }
            for (i, pair) in pairs.enumerated() where share[i] > 0 {
                if share[i] < wanted[i] { spread = true }
                // An error's key is the one plans had before kinds, so a seed keeps its plan.
                let key = pair.profile.function + (pair.kind == .error ? "" : "/" + pair.kind.rawValue) + "/" + pair.errno
                for k in Self.spreadCalls(count: share[i], of: wanted[i], seed: seed, key: key) {
                    points.append(FaultPoint(function: pair.profile.function, site: nil, nth: k, errno: pair.errno, kind: pair.kind))
                }
            }
        }
        return ExplorePlan(points: points, candidates: candidates, spread: spread, sitesSampled: sitesSampled)
    }

    /// `--strategy context`: the first call through each calling context of `depth` frames
    /// fails (FIFUZZ's context-sensitive injection). A function none of whose calls had a
    /// context the preload could unwind (context.c says where it does not) keeps its sites'
    /// points, so it is not left out. Over budget, taken round-robin over the functions, as
    /// sites are.
    static func contextPlan(_ ordered: [FunctionProfile], depth: Int, variants: (String) -> [(kind: FaultKind, errno: String)],
                            maxRuns: Int) -> ExplorePlan {
        let perFunction = ordered.map { p in
            p.contexts.isEmpty ? p.sites.keys.sorted().flatMap { site in
                variants(p.function).map { FaultPoint(function: p.function, site: site, nth: 1, errno: $0.errno, kind: $0.kind) }
            } : p.contexts(depth: depth).keys.sorted { $0.frames.lexicographicallyPrecedes($1.frames) }.flatMap { c in
                variants(p.function).map { v in
                    var point = FaultPoint(function: p.function, site: nil, nth: 1, errno: v.errno, kind: v.kind)
                    point.context = c.frames
                    return point
                }
            }
        }
        let all = perFunction.flatMap { $0 }
        guard all.count > maxRuns else { return ExplorePlan(points: all, candidates: all.count, spread: false) }
        var taken = Set<FaultPoint>()
        var round = 0
        while taken.count < maxRuns {
            for list in perFunction where round < list.count && taken.count < maxRuns { taken.insert(list[round]) }
            round += 1
        }
        return ExplorePlan(points: all.filter { taken.contains($0) }, candidates: all.count, spread: false, sitesSampled: true)
    }

    /// `count` call numbers out of 1...total, evenly spaced: one in each of `count` equal
    /// strides, at a place within the stride drawn from the seed (seed 0: the stride's first
    /// call, so call 1 is always among them).
    static func spreadCalls(count: UInt64, of total: UInt64, seed: UInt64, key: String) -> [UInt64] {
        if count >= total { return Array(1...max(1, total)).filter { $0 <= total } }
        var out: [UInt64] = []
        out.reserveCapacity(Int(count))
        let salt = seed == 0 ? 0 : SplitMix64.mix(seed ^ FNV1a.hash(key))
        for j in 0..<count {
            let lo = j * total / count, hi = (j + 1) * total / count  // [lo, hi) as 0-based calls
            let width = max(1, hi - lo)
            let within = seed == 0 ? 0 : SplitMix64.mix(salt &+ j) % width
            out.append(lo + within + 1)
        }
        return out
    }
}
