import AspectsRules

/// Where a rule's firings came from, by call site: the calling object and the return
/// address's offset in it, as events and the `site` condition write it.
///
/// Read from the event ring. The preload records an event for every firing (a `log` action's
/// too) and for every call an instead rule matched while an earlier one took it (shadowed),
/// each with its caller; a call that matched without firing is only counted (`matched`), with
/// no site. So these numbers are firings and shadowed calls, never matched calls, and only
/// those whose record the ring still holds: `firedWithoutSite` says how many firings that
/// leaves unplaced.
public struct RuleSites: Sendable, Equatable {
    /// One call site's share of a rule's recorded calls.
    public struct Site: Sendable, Equatable {
        public var site: CallSite
        /// Firings from this site that the ring holds.
        public var fired: UInt64
        /// Calls from this site the rule matched but an earlier instead rule took.
        public var shadowed: UInt64
    }

    /// Most firings first, then by site.
    public var sites: [Site] = []
    /// The rule's firings (its `fired` count) that no event in the ring places: the ring
    /// overran or dropped their records, or the preload could not name the caller.
    public var firedWithoutSite: UInt64 = 0
}

extension AdviceTable {
    /// Per rule id, where its firings came from (see RuleSites), for `rules` as `rules()`
    /// reads them: a removed rule and a later one with its id count together, as the events
    /// name rules by id.
    package func sites(of rules: [TableRule]) -> [String: RuleSites] {
        var fired: [String: [CallSite: UInt64]] = [:], shadowed: [String: [CallSite: UInt64]] = [:]
        for e in events(from: 0).events {
            guard let site = e.site else { continue }
            // an unavailable `call` firing counts as fired (it did: only its function could not run)
            if e.kind == "fired" || e.kind == "unavailable" { fired[e.rule, default: [:]][site, default: 0] += 1 }
            if e.kind == "shadowed" { shadowed[e.rule, default: [:]][site, default: 0] += 1 }
        }
        var totals: [String: UInt64] = [:]
        for r in rules { totals[r.id] = AdviceTable.saturatingAdd(totals[r.id] ?? 0, r.fired) }
        var out: [String: RuleSites] = [:]
        for (id, total) in totals {
            let f = fired[id] ?? [:], s = shadowed[id] ?? [:]
            let sites = Set(f.keys).union(s.keys).map { RuleSites.Site(site: $0, fired: f[$0] ?? 0, shadowed: s[$0] ?? 0) }
            let placed = sites.reduce(UInt64(0)) { AdviceTable.saturatingAdd($0, $1.fired) }
            out[id] = RuleSites(sites: sites.sorted { ($1.fired, $0.site.description) < ($0.fired, $1.site.description) },
                                firedWithoutSite: total > placed ? total - placed : 0)
        }
        return out
    }

    /// Counts read from a table are untrusted: sums saturate rather than trap.
    static func saturatingAdd(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let (s, o) = a.addingReportingOverflow(b)
        return o ? .max : s
    }
}
