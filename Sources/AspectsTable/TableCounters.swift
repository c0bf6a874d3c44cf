import CAspectsABI
import AspectsCore

/// The counters every attached process writes — a rule's matched and fired counts, the
/// per-process statistics, the event ring's head and aspectctl's event cursor — are read as
/// untrusted as any other word of the table: an impossible value stops the command (exit 65)
/// with the table and the word named, rather than being printed, summed or iterated over.
extension AdviceTable {
    /// No count of a table reaches 2^62. Each of these words moves by one per call or per
    /// event; at one a nanosecond — more than atomic increments of one shared word sustain —
    /// 2^62 takes 146 years. A larger value is damage (a stray write, a process writing into
    /// its attached table), not a count.
    package static let countLimit: UInt64 = 1 << 62

    /// Throws when a count of `rules` (total or per process) is past `countLimit`.
    package func checkCounts(_ rules: [TableRule]) throws(AspectsError) {
        for r in rules {
            try checkCount(r.matched, "rule \"\(r.id)\"'s matched count")
            try checkCount(r.fired, "rule \"\(r.id)\"'s fired count")
            for p in r.byProcess {
                try checkCount(p.matched, "rule \"\(r.id)\"'s matched count for pid \(p.pid)")
                try checkCount(p.fired, "rule \"\(r.id)\"'s fired count for pid \(p.pid)")
            }
        }
    }

    /// Throws when the event ring's head (events ever recorded) or the cursor `events --clear`
    /// left is past `countLimit`.
    package func checkEventCounters() throws(AspectsError) {
        try checkCount(eventHead, "event ring's head (events ever recorded)")
        try checkCount(eventCursor, "event cursor (events --clear)")
    }

    func checkCount(_ value: UInt64, _ what: String) throws(AspectsError) {
        guard value < Self.countLimit else {
            throw AspectsError(.badTable, field: "--table",
                               "table \"\(name)\" is damaged: its \(what) is \(value), more than any table reaches (2^62: one a nanosecond for 146 years)",
                               fix: "destroy and re-create it (`aspectctl destroy --table \(name)`)")
        }
    }
}
