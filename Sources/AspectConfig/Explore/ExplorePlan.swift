/// What the baseline run saw of one function: how often it was called, and from where.
public struct FunctionProfile: Sendable, Equatable {
    public var function: String
    /// Calls in the whole process tree.
    public var calls: UInt64
    /// Each call site seen, with the calls made from it.
    public var sites: [CallSite: UInt64]

    public init(function: String, calls: UInt64, sites: [CallSite: UInt64]) {
        self.function = function
        self.calls = calls
        self.sites = sites
    }
}

/// One fault of a campaign: the call that fails, and how.
public struct FaultPoint: Hashable, Sendable, CustomStringConvertible {
    public enum Strategy: String, Sendable, CaseIterable { case sites, nth, both }

    public var function: String
    /// With a site, `nth` counts the calls from that site only.
    public var site: CallSite?
    public var nth: UInt64
    public var errno: String

    public init(function: String, site: CallSite?, nth: UInt64, errno: String) {
        self.function = function
        self.site = site
        self.nth = nth
        self.errno = errno
    }

    public var description: String {
        (site.map { "\(function) from \($0), call \(nth)" } ?? "\(function) call \(nth)") + " fails with \(errno)"
    }

    /// The rule that makes this fault: the function's own failure with `errno`, on exactly that
    /// call. The same JSON goes into the run's table and into the reproducer.
    public var ruleJSON: String {
        var when = ["\"nth\":\(nth)"]
        if let site { when.insert("\"site\":\"\(site)\"", at: 0) }
        return "{\"id\":\"explore\",\"symbol\":\"\(function)\",\"position\":\"instead\",\"action\":{\"fail\":\"\(errno)\"},\"when\":{\(when.joined(separator: ","))}}"
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
    public static func make(profiles: [FunctionProfile], strategy: FaultPoint.Strategy, errnos: (String) -> [String],
                            maxRuns: Int, seed: UInt64) -> ExplorePlan {
        let ordered = profiles.filter { $0.calls > 0 }.sorted { $0.function < $1.function }
        var points: [FaultPoint] = []
        var candidates = 0
        var sitesSampled = false
        if strategy != .nth {
            let perFunction = ordered.map { p in
                p.sites.keys.sorted().flatMap { site in errnos(p.function).map { FaultPoint(function: p.function, site: site, nth: 1, errno: $0) } }
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
            let pairs = ordered.flatMap { p in errnos(p.function).map { (profile: p, errno: $0) } }
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
                for k in Self.spreadCalls(count: share[i], of: wanted[i], seed: seed, key: pair.profile.function + "/" + pair.errno) {
                    points.append(FaultPoint(function: pair.profile.function, site: nil, nth: k, errno: pair.errno))
                }
            }
        }
        return ExplorePlan(points: points, candidates: candidates, spread: spread, sitesSampled: sitesSampled)
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
