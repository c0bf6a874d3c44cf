import AspectsCore
import AspectsRules

/// What the baseline run saw of one function in one program image.
package struct ImageCalls: Sendable, Equatable {
    package var calls: UInt64
    /// Each call site seen in that image, with the calls made from it.
    package var sites: [CallSite: UInt64]
    /// Each calling context seen in that image (a survey that records them), with its calls.
    package var contexts: [CallContext: UInt64]

    package init(calls: UInt64, sites: [CallSite: UInt64] = [:], contexts: [CallContext: UInt64] = [:]) {
        self.calls = calls
        self.sites = sites
        self.contexts = contexts
    }

    /// The contexts cut to `depth` frames and before the first of `startup` (glibc's process
    /// start-up, the same for every call and elsewhere in another glibc build), calls summed.
    package func contexts(depth: Int, startup: Set<CallSite>) -> [CallContext: UInt64] {
        contexts.reduce(into: [:]) { $0[$1.key.prefix(depth).before(startup), default: 0] += $1.value }
    }
}

/// What the baseline run saw of one function: how often it was called, and from where, in the
/// whole tree and per program image (fault points are made per image).
package struct FunctionProfile: Sendable, Equatable {
    package var function: String
    /// Calls in the whole process tree.
    package var calls: UInt64
    /// Each call site seen, with the calls made from it.
    package var sites: [CallSite: UInt64]
    /// Program image (executable path; "" for processes no record named) → its calls.
    package var images: [String: ImageCalls]
    /// Each calling context seen (a survey that records them: `--strategy context`), with the
    /// calls made through it; contexts are as deep as the preload records them.
    package var contexts: [CallContext: UInt64]

    package init(function: String, calls: UInt64, sites: [CallSite: UInt64], images: [String: ImageCalls] = [:],
                contexts: [CallContext: UInt64] = [:]) {
        self.function = function
        self.calls = calls
        self.sites = sites
        self.images = images
        self.contexts = contexts
    }

    /// The contexts cut to `depth` frames, calls through each summed.
    package func contexts(depth: Int) -> [CallContext: UInt64] {
        contexts.reduce(into: [:]) { $0[$1.key.prefix(depth), default: 0] += $1.value }
    }
}

/// One fault of a campaign: the call that fails, and how. It is named by what it fails — the
/// program image, the function, the site (for a site point), which call there and the fault —
/// never by a number of the whole tree's calls, so the same baseline gives the same names.
package struct FaultPoint: Hashable, Sendable, CustomStringConvertible {
    package typealias Strategy = FaultPointStrategy

    /// The executable whose calls it counts, in every process of the tree that runs it; ""
    /// (no image known): the calls of every process.
    package var image: String
    /// The image as the point's name gives it: its file name, or its path when another image
    /// of the campaign has the same file name.
    package var imageName: String
    package var function: String
    /// With a site, `nth` counts the calls from that site only.
    package var site: CallSite?
    /// A context point's calling context, the site first (`--strategy context`); `nth` counts
    /// the calls made through it only.
    package var context: [CallSite]?
    /// The call that fails among the image's calls (persistent: the first of the calls that fail).
    package var nth: UInt64
    /// The error injected; empty for a short transfer, which reports none.
    package var errno: String
    package var kind: FaultKind

    package init(function: String, site: CallSite?, nth: UInt64, errno: String, kind: FaultKind = .error,
                image: String = "", imageName: String? = nil) {
        self.image = image
        self.imageName = imageName ?? Self.fileName(image)
        self.function = function
        self.site = site
        self.nth = nth
        self.errno = errno
        self.kind = kind
    }

    static func fileName(_ path: String) -> String { path.split(separator: "/").last.map(String.init) ?? path }

    /// The point's stable name, `git:write@git+0x1a2b#3/error/EIO` (image, function, site,
    /// call, kind, errno): what reports, test case names and plan ids call it.
    package var name: String {
        (imageName.isEmpty ? "*" : imageName) + ":" + function + (site.map { "@\($0)" } ?? context.map { "@" + CallContext($0).description } ?? "")
            + "#\(nth)/\(kind.rawValue)"
            + (errno.isEmpty ? "" : "/" + errno)
    }

    /// What the fault does to its call, as reports say it: "fails with EIO".
    package var effect: String {
        switch kind {
        case .error: return "fails with \(errno)"
        case .persistent: return "and every later call fail with \(errno)"
        case .short: return "transfers short"
        }
    }

    /// Whether the errno is the catalog's default of a function whose default depends on the
    /// descriptor (`default: file=ENOSPC pipe=EPIPE ...`): the rule then says `"fail": true` and
    /// the preload picks the error of what the descriptor is when it fires (the point keeps the
    /// file's name, as reports do).
    var failsByDescriptor: Bool {
        let catalog = Catalog.builtIn
        guard let f = catalog.function(named: function) else { return false }
        let g = catalog.group(of: f)
        return !g.defaultByKind.isEmpty && g.defaultErrno == errno
    }

    /// The fault without its image (reports name the image where the tree had several).
    package var description: String {
        if let context { return "\(function) via \(CallContext(context)), call \(nth) \(effect)" }
        return (site.map { "\(function) from \($0), call \(nth)" } ?? "\(function) call \(nth)") + " " + effect
    }

    /// The `process` condition that keeps a rule to the point's image: its path, matched
    /// literally (a path cut at its start by the attachment record: any path ending so).
    var processCondition: String? {
        guard !image.isEmpty else { return nil }
        let glob = (ProgramImage.mayBeCut(image) ? "*" : "") + ProcessGlob.literal(image)
        return "\"process\":" + JSONNode.Value.quote(glob)
    }

    /// The rule that makes this fault, on exactly that call (persistent: from that call on):
    /// counted over the whole tree (`scope: table`) in the image's processes only, so call k
    /// is the image's k-th call wherever it happens and ONE call of ONE process fails. An
    /// error leaves "position" out, so the catalog puts it where the function's real failure
    /// happens: after a close ran (the descriptor released), instead of a write. The same JSON
    /// goes into the run's table and into the reproducer.
    package var ruleJSON: String {
        var when = [kind == .persistent ? (nth > 1 ? "\"after\":\(nth - 1)" : nil) : "\"nth\":\(nth)"].compactMap { $0 }
        if let site { when.insert("\"site\":\"\(site)\"", at: 0) }
        if let processCondition { when.insert(processCondition, at: 0) }
        if let context { when.insert("\"context\":\(CallContext(context).ruleJSON)", at: 0) }
        // A short transfer's cut is drawn from the rule's seed: a fixed one, so that the
        // reproducer cuts the same count.
        if kind == .short { when.append("\"seed\":1") }
        let fail = failsByDescriptor ? "true" : "\"\(errno)\""
        let how = kind == .short ? "\"position\":\"before\",\"action\":{\"short\":true}" : "\"action\":{\"fail\":\(fail)}"
        return "{\"id\":\"explore\",\"symbol\":\"\(function)\",\"scope\":\"table\",\(how),\"when\":{\(when.joined(separator: ","))}}"
    }

    /// A log rule on the same calls the point counts (its image's, tree-wide), at most `times`
    /// of them: what `locate` reads the failed call's site from.
    func logRuleJSON(id: String, times: UInt64) -> String {
        let when = [processCondition, "\"times\":\(times)"].compactMap { $0 }.joined(separator: ",")
        return "{\"id\":\"\(id)\",\"symbol\":\"\(function)\",\"scope\":\"table\",\"position\":\"before\",\"action\":{\"log\":true},\"when\":{\(when)}}"
    }
}

/// The faults of a campaign, in the order they run: the same profile, options and seed give the
/// same plan.
///
/// Candidates come in buckets — one per image, function, fault kind and errno (and site, for
/// the first call of each site) — and the budget is filled round-robin over the buckets in a
/// fixed order: round r takes each bucket's r-th candidate. Inside a bucket the first call
/// comes first (whatever the seed: where initialisation fails, the calls most worth failing),
/// then the others in the order of a seeded hash of their call number and the bucket. So a
/// change in one function's or one site's count moves only that bucket's points, plus at most
/// as many elsewhere as the count changed, where the budget ends. A hash order rather than even
/// strides: a stride depends on how many of the bucket's calls fit, which depends on every
/// other bucket, and its points would all move together; a hash order keeps a bucket's first r
/// candidates whatever r is, and spreads them over the calls no less evenly in expectation.
package struct ExplorePlan: Sendable, Equatable {
    package var points: [FaultPoint]
    /// Fault points the strategy named (before the budget), and whether some bucket's calls
    /// were not all taken (then the report says so).
    package var candidates: Int
    package var spread: Bool
    /// More site points than runs: some sites got no run.
    package var sitesSampled = false
    /// What defines the plan, as a hash (`PlanIdentity`): set by `identify`.
    package var id = ""

    /// One bucket of candidates: calls 1...count of one function in one image, with one fault.
    struct Bucket {
        var image: String, imageName: String, function: String
        var site: CallSite?
        var context: [CallSite]? = nil
        var kind: FaultKind, errno: String
        var count: UInt64
        /// What names the bucket: the seeded hashes of its order and of its calls start here.
        var key: String {
            [image, function, site?.description ?? context.map { CallContext($0).description } ?? "", kind.rawValue, errno].joined(separator: "\u{1}")
        }
    }

    /// - errnos: for each function, the codes to inject (the function's default when the user
    ///   named none it can produce).
    /// - kinds: for each function, the fault kinds that apply to it (`--fault`, FaultKind.applies).
    /// - processes: `--process` globs; images none matches are left out (none: every image).
    package static func make(profiles: [FunctionProfile], strategy: FaultPoint.Strategy, errnos: (String) -> [String],
                            kinds: (String) -> [FaultKind] = { _ in [.error] }, maxRuns: Int, seed: UInt64,
                            processes: [String] = [], contextDepth: Int = 3, startup: Set<CallSite> = []) -> ExplorePlan {
        let buckets = Self.buckets(profiles: profiles, strategy: strategy, errnos: errnos, kinds: kinds, processes: processes,
                                   contextDepth: contextDepth, startup: startup)
        let takes = Self.roundRobin(buckets.map(\.count), budget: UInt64(max(0, maxRuns)), order: Self.order(of: buckets, seed: seed))
        var points: [(order: (Int, String), point: FaultPoint)] = []
        for (b, take) in zip(buckets, takes) where take > 0 {
            for k in Self.calls(take, of: b.count, bucket: FNV1a.hash(b.key), seed: seed) {
                var point = FaultPoint(function: b.function, site: b.site, nth: k, errno: b.errno, kind: b.kind, image: b.image, imageName: b.imageName)
                point.context = b.context
                points.append(((b.site == nil && b.context == nil ? 1 : 0, b.key), point))
            }
        }
        // Runs in name order: a bucket's points together, site points first.
        points.sort { ($0.order.0, $0.order.1, $0.point.nth) < ($1.order.0, $1.order.1, $1.point.nth) }
        let cut = zip(buckets, takes).filter { $0.1 < $0.0.count }
        return ExplorePlan(points: points.map(\.point), candidates: Int(clamping: buckets.reduce(UInt64(0)) { $0 &+ $1.count }),
                           spread: cut.contains { $0.0.site == nil && $0.0.context == nil },
                           sitesSampled: cut.contains { $0.0.site != nil || $0.0.context != nil })
    }

    /// Whether an image takes part in a campaign limited to `processes` (`--process`; none:
    /// every image): matched as a rule's `process` glob matches it.
    package static func includes(image: String, processes: [String]) -> Bool {
        !image.isEmpty && (processes.isEmpty || processes.contains { ProcessGlob.matches($0, image: image) })
    }

    /// The images' names in points: the file name, or the path when two images share it.
    static func imageNames(_ images: Set<String>) -> [String: String] {
        let byName = Dictionary(grouping: images, by: FaultPoint.fileName)
        return Dictionary(uniqueKeysWithValues: images.map { ($0, byName[FaultPoint.fileName($0)]!.count > 1 ? $0 : FaultPoint.fileName($0)) })
    }

    static func buckets(profiles: [FunctionProfile], strategy: FaultPoint.Strategy, errnos: (String) -> [String],
                        kinds: (String) -> [FaultKind], processes: [String], contextDepth: Int = 3, startup: Set<CallSite> = []) -> [Bucket] {
        let names = imageNames(Set(profiles.flatMap { $0.images.keys }))
        var out: [Bucket] = []
        for p in profiles.sorted(by: { $0.function < $1.function }) {
            /// Each way one call of the function fails: a kind with each errno (a short transfer has none).
            let variants = kinds(p.function).flatMap { k in k == .short ? [(k, "")] : errnos(p.function).map { (k, $0) } }
            for (image, calls) in p.images.sorted(by: { $0.key < $1.key })
            where calls.calls > 0 && includes(image: image, processes: processes) {
                let name = names[image] ?? image
                // `--strategy context`: the first call through each calling context of the
                // depth (FIFUZZ's context-sensitive injection) in each image, as any point is
                // (its rule's `process` glob: `--process` holds, and no other program of a
                // pipeline is failed); an image none of whose calls had a context the preload
                // could unwind keeps its sites' points.
                if strategy == .context && !calls.contexts.isEmpty {
                    for c in calls.contexts(depth: contextDepth, startup: startup).keys.sorted(by: { $0.frames.lexicographicallyPrecedes($1.frames) }) {
                        for (kind, errno) in variants {
                            out.append(Bucket(image: image, imageName: name, function: p.function, site: nil, context: c.frames, kind: kind, errno: errno, count: 1))
                        }
                    }
                    continue
                }
                if strategy != .nth {
                    for site in calls.sites.keys.sorted() {
                        for (kind, errno) in variants {
                            out.append(Bucket(image: image, imageName: name, function: p.function, site: site, kind: kind, errno: errno, count: 1))
                        }
                    }
                }
                if strategy != .sites && strategy != .context {
                    for (kind, errno) in variants {
                        out.append(Bucket(image: image, imageName: name, function: p.function, site: nil, kind: kind, errno: errno, count: calls.calls))
                    }
                }
            }
        }
        return out
    }

    /// Where a bucket comes in each round: a seeded hash of its key, the same whatever the counts.
    static func bucketRank(_ key: String, seed: UInt64) -> UInt64 { SplitMix64.mix(seed ^ FNV1a.hash(key)) }

    /// How many candidates each bucket gives: round r takes the r-th of every bucket that has
    /// one, buckets in `order` (ties by index), until the budget is spent.
    /// Where each bucket comes in a round: the buckets of one function's sites (or contexts)
    /// in one image with one fault are a group, taken in the seeded-hash order of their keys,
    /// every group's first before any group's second — so over budget each function gets its
    /// first site before another gets its second, whatever their numbers of sites — and the
    /// groups (a k-th-call bucket is a group of its own) in the seeded-hash order of theirs.
    /// A new site moves only its own group's places.
    static func order(of buckets: [Bucket], seed: UInt64) -> [(UInt64, UInt64)] {
        func group(_ b: Bucket) -> String {
            [b.image, b.function, b.kind.rawValue, b.errno, b.site != nil ? "site" : b.context != nil ? "context" : "calls"].joined(separator: "\u{1}")
        }
        var place = [Int](repeating: 0, count: buckets.count)
        let groups = Dictionary(grouping: buckets.indices, by: { group(buckets[$0]) })
        for (_, members) in groups {
            let ranked = members.sorted { (bucketRank(buckets[$0].key, seed: seed), $0) < (bucketRank(buckets[$1].key, seed: seed), $1) }
            for (n, i) in ranked.enumerated() { place[i] = n }
        }
        return buckets.indices.map { (UInt64(place[$0]), bucketRank(group(buckets[$0]), seed: seed)) }
    }

    static func roundRobin(_ counts: [UInt64], budget: UInt64, order: [(UInt64, UInt64)]) -> [UInt64] {
        var takes = [UInt64](repeating: 0, count: counts.count)
        var left = budget
        var open = counts.indices.filter { counts[$0] > 0 }.sorted { (order[$0].0, order[$0].1, $0) < (order[$1].0, order[$1].1, $1) }
        while left > 0 && !open.isEmpty {
            var next: [Int] = []
            for i in open {
                guard left > 0 else { break }
                takes[i] += 1
                left -= 1
                if takes[i] < counts[i] { next.append(i) }
            }
            open = next
        }
        return takes
    }

    /// The first `take` of a bucket's calls 1...count: call 1, then the calls with the smallest
    /// seeded hashes (a bounded heap: a bucket may hold millions of calls).
    static func calls(_ take: UInt64, of count: UInt64, bucket: UInt64, seed: UInt64) -> [UInt64] {
        guard take > 0, count > 0 else { return [] }
        if take >= count { return Array(1...count) }
        func rank(_ k: UInt64) -> UInt64 { SplitMix64.draw(seed: seed, ruleKey: bucket, call: k) }
        var heap = MaxHeap(capacity: Int(take - 1))
        if take > 1 { for k in 2...count { heap.offer((rank(k), k)) } }
        return [1] + heap.items.map(\.1).sorted()
    }

    /// The `capacity` smallest (rank, call) pairs offered.
    struct MaxHeap {
        let capacity: Int
        var items: [(UInt64, UInt64)] = []

        init(capacity: Int) {
            self.capacity = capacity
            items.reserveCapacity(capacity)
        }

        mutating func offer(_ e: (UInt64, UInt64)) {
            guard capacity > 0 else { return }
            if items.count < capacity {
                items.append(e)
                var i = items.count - 1
                while i > 0, items[(i - 1) / 2] < items[i] { items.swapAt(i, (i - 1) / 2); i = (i - 1) / 2 }
            } else if e < items[0] {
                items[0] = e
                var i = 0
                while true {
                    let l = 2 * i + 1, r = l + 1
                    var m = i
                    if l < items.count, items[m] < items[l] { m = l }
                    if r < items.count, items[m] < items[r] { m = r }
                    if m == i { break }
                    items.swapAt(i, m)
                    i = m
                }
            }
        }
    }
}
