import CAspectsABI
import AspectsRules
import AspectsTable

/// The call sites of the events in a table's ring, per rule id: what explore's baseline learns
/// from its log-only rules. Read straight from the records (seqlock-checked, every length
/// bounded), so that a ring written by any process cannot make it misread.
package struct CallSiteTally: Sendable, Equatable {
    /// rule id → site → events seen from it
    package var sites: [String: [CallSite: UInt64]] = [:]
    /// rule id → events seen (whatever their site)
    package var events: [String: UInt64] = [:]
    /// rule id → the export each call came by (an index into the catalog's functions, as the
    /// record holds it: unchecked; past them, a function advised from a prototype) → events
    package var exports: [String: [Int: UInt64]] = [:]
    /// rule id → program image → site → events seen from it (with an image resolver)
    package var imageSites: [String: [String: [CallSite: UInt64]]] = [:]
    /// rule id → calling context → events seen through it (rules that record contexts)
    package var contexts: [String: [CallContext: UInt64]] = [:]
    /// rule id → program image → calling context → events seen through it (with an image resolver)
    package var imageContexts: [String: [String: [CallContext: UInt64]]] = [:]
    /// Records the ring no longer held when it was read.
    package var dropped: UInt64 = 0
}

extension AdviceTable {
    /// Tallies the call sites of every complete record in the ring; with `image`, also per
    /// program image, which it tells from an event's pid and time.
    package func callSites(image: ((_ pid: Int32, _ time: UInt64) -> String)? = nil) -> CallSiteTally {
        var tally = CallSiteTally()
        let head = aspects_load_acquire_u64(field(header, \.event_head))
        let capacity = UInt64(eventCapacity)
        guard capacity > 0, capacity & (capacity &- 1) == 0 else { return tally }
        let start = head > capacity ? head - capacity : 0
        tally.dropped = start
        let h = header.pointee
        let offset = Int(h.events_offset)
        guard offset >= 0, offset + Int(capacity) * MemoryLayout<aspects_event>.stride <= size else { return tally }
        let ring = (base + offset).assumingMemoryBound(to: aspects_event.self)
        var i = start
        while i < head {
            let r = ring + Int(i & (capacity - 1))
            let seq = field(r, \.seq)
            let expected = 2 &* i &+ 2
            if aspects_load_acquire_u64(seq) == expected {
                let copy = r.pointee
                if aspects_load_acquire_u64(seq) == expected {
                    let id = withUnsafeBytes(of: copy.rule_id) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                    let object = withUnsafeBytes(of: copy.caller_object) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                    tally.events[id, default: 0] += 1
                    tally.exports[id, default: [:]][Int(copy.export_index), default: 0] += 1
                    if !object.isEmpty {
                        let site = CallSite(object: object, offset: copy.caller_offset)
                        tally.sites[id, default: [:]][site, default: 0] += 1
                        let program = image?(Int32(bitPattern: copy.pid), copy.time_ns)
                        if let program { tally.imageSites[id, default: [:]][program, default: [:]][site, default: 0] += 1 }
                        if let context = AdviceTable.context(of: copy, site: site) {
                            tally.contexts[id, default: [:]][context, default: 0] += 1
                            if let program { tally.imageContexts[id, default: [:]][program, default: [:]][context, default: 0] += 1 }
                        }
                    }
                } else {
                    tally.dropped += 1
                }
            } else {
                tally.dropped += 1
            }
            i += 1
        }
        return tally
    }
}
