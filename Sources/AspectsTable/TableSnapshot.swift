#if canImport(Glibc)
import Glibc
#endif
import CAspectsABI
import AspectsCore
import AspectsRules

/// A rule as the table holds it, read back for `list` and `stats`.
package struct TableRule: Sendable, Equatable {
    package enum State: String, Sendable { case active, removed }

    package var slot: Int
    package var id: String
    package var state: State
    package var symbol: String
    /// All names the rule applies to (its alias group).
    package var names: [String]
    package var position: String
    package var actions: [String]
    package var conditions: [String]
    package var scope: String
    package var matched: UInt64
    package var fired: UInt64
    /// Processes this rule did not advise because every per-hierarchy entry of it belonged to
    /// a process hierarchy still running (scope or once "hierarchy").
    package var hierarchiesFull: UInt64 = 0
    package var serial: UInt64
    package var addedNanoseconds: UInt64
    package var removedNanoseconds: UInt64?
    package var removedByPID: Int32?
    /// The seed of a rule that draws (probability, or a list of errors).
    package var seed: UInt64?
    /// For a function advised from its prototype: whether (and where) it is applied.
    package var prototypeStatus: String?
    /// Calls matched and firings per process (processes that found no statistics entry are
    /// counted in the totals only).
    /// `image`: the process image's attachment number + 1 (0 unknown): an exec'd image of the
    /// same pid counts apart, so counts can be named by program.
    package var byProcess: [(pid: Int32, image: UInt64, matched: UInt64, fired: UInt64)] = []
    /// The rule's JSON as it was added (its id and seed written in): `add` takes it again.
    package var source: String?

    package static func == (a: TableRule, b: TableRule) -> Bool {
        a.slot == b.slot && a.id == b.id && a.state == b.state && a.serial == b.serial && a.matched == b.matched && a.fired == b.fired
    }

    package var json: JSONNode.Value {
        JSONOut.object([
            ("id", .string(id)), ("state", .string(state.rawValue)), ("symbol", .string(symbol)),
            ("names", JSONOut.array(names.map { .string($0) })), ("position", .string(position)),
            ("actions", JSONOut.array(actions.map { .string($0) })), ("when", JSONOut.array(conditions.map { .string($0) })),
            ("scope", .string(scope)), ("matched", JSONOut.int(matched)), ("fired", JSONOut.int(fired)),
            ("slot", JSONOut.int(slot)), ("addedNs", JSONOut.int(addedNanoseconds)),
            ("removedNs", removedNanoseconds.map { JSONOut.int($0) }), ("removedBy", removedByPID.map { JSONOut.int($0) }),
            ("seed", seed.map { JSONOut.int($0) }),
            ("prototypeStatus", prototypeStatus.map { .string($0) }),
            ("rule", source.flatMap { try? JSONParser.parse($0).value }),
            ("byProcess", JSONOut.array(byProcess.map {
                JSONOut.object([("pid", JSONOut.int($0.pid)), ("matched", JSONOut.int($0.matched)), ("fired", JSONOut.int($0.fired))])
            })),
        ])
    }
}

extension AdviceTable {
    static func saturatingSum(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let (s, overflow) = a.addingReportingOverflow(b)
        return overflow ? .max : s
    }

    /// The rules in table order (oldest first): active ones, and removed ones with `includeRemoved`.
    ///
    /// A consistent view across slots, as of one committed batch: the live slots are copied
    /// against one reading of `committed_batch`, between two equal readings of `generation`
    /// (bumped after every commit, and before a commit's slots are normalized). A batch being
    /// written or committed meanwhile shows whole or not at all, never some of its rules.
    package func rules(includeRemoved: Bool = false) -> [TableRule] {
        var copies: [(slot: Int, rule: aspects_rule, state: TableRule.State, claim: UInt32)] = []
        for attempt in 0..<1000 {
            let before = aspects_load_acquire_u64(field(header, \.generation))
            copies = liveCopies(committed: aspects_load_acquire_u64(field(header, \.committed_batch)))
            aspects_fence_acquire()
            if aspects_load_acquire_u64(field(header, \.generation)) == before { break }
            // A writer is committing: let it finish (a writer stopped mid-batch does not commit).
            if attempt > 10 { usleep(1000) }
        }
        let perProcess = processStatistics()
        var out: [TableRule] = []
        for (slot, rule, copyState, claim) in copies {
            var copy = rule
            var state = copyState
            // A fired autoRemove rule is gone for every reader already, before a writer tidies up.
            let autoRemoved = state == .active && copy.flags & ASPECTS_RULE_AUTOREMOVE.rawValue != 0 && claim != 0
            if autoRemoved { state = .removed }
            if state == .removed && !includeRemoved { continue }
            var described = describe(&copy, slot: slot, state: state)
            described.source = sourceText(slot: slot, serial: copy.serial)
            let k = Int(copy.named_export & ~AdviceTable.prototypeFlag)
            if copy.named_export & AdviceTable.prototypeFlag != 0, let p = prototypeStatus(k) {
                // The entry's registration is this rule's while its serial is older than the
                // rule's; a later one is another function's (the entry was freed and reused).
                let entry = proto(k).pointee
                let ours = entry.serial != 0 && entry.serial < copy.serial
                described.symbol = ours ? p.name : "(a function advised from a prototype)"
                described.names = [described.symbol]
                if state == .active {
                    described.prototypeStatus = p.status
                } else if ours && entry.state == 1 {
                    described.prototypeStatus = "removed; the function's other rules keep it advised"
                } else {
                    described.prototypeStatus = "removed; each process put the original slots back at its next advised call"
                }
            }
            if autoRemoved { described.removedByPID = Int32(bitPattern: claim); described.removedNanoseconds = 0 }
            let entries = perProcess[copy.serial] ?? []
            described.byProcess = entries.sorted { ($0.pid, $0.image) < ($1.pid, $1.image) }
            // Counters any attached process can write: summed without trapping (saturating).
            described.matched = entries.reduce(described.matched) { Self.saturatingSum($0, $1.matched) }
            described.fired = entries.reduce(described.fired) { Self.saturatingSum($0, $1.fired) }
            out.append(described)
        }
        return out.sorted { $0.serial < $1.serial }
    }

    /// Copies of the slots that hold a rule, each with its state as `aspects_rule_live` decides
    /// it against `committed` (the preload's definition): a rule of an uncommitted batch is
    /// left out, a rule removed by one is still active.
    func liveCopies(committed: UInt64) -> [(slot: Int, rule: aspects_rule, state: TableRule.State, claim: UInt32)] {
        var out: [(slot: Int, rule: aspects_rule, state: TableRule.State, claim: UInt32)] = []
        for slot in 0..<ruleCapacity {
            let r = rule(slot)
            // Cheap look first: most slots of a table are free.
            if aspects_load_acquire_u32(field(r, \.state)) == ASPECTS_RULE_FREE.rawValue
                && aspects_load_acquire_u32(field(r, \.seq)) & 1 == 0 { continue }
            // A consistent copy: retry while a writer is mid-update.
            var copy = r.pointee
            for _ in 0..<100 {
                let s1 = aspects_load_acquire_u32(field(r, \.seq))
                copy = r.pointee
                aspects_fence_acquire()
                if s1 & 1 == 0 && aspects_load_acquire_u32(field(r, \.seq)) == s1 { break }
            }
            let state: TableRule.State
            switch copy.state {
            case ASPECTS_RULE_ACTIVE.rawValue, ASPECTS_RULE_ADDING.rawValue, ASPECTS_RULE_REMOVING.rawValue:
                let live = aspects_rule_live(copy.state, copy.batch, committed) != 0
                // Not yet added is not there at all; being removed is still active.
                if !live && copy.state == ASPECTS_RULE_ADDING.rawValue { continue }
                state = live ? .active : .removed
            case ASPECTS_RULE_REMOVED.rawValue: state = .removed
            default: continue
            }
            out.append((slot, copy, state, aspects_load_acquire_u32(field(r, \aspects_rule.claim))))
        }
        return out
    }

    /// The statistics region, by rule serial.
    func processStatistics() -> [UInt64: [(pid: Int32, image: UInt64, matched: UInt64, fired: UInt64)]] {
        var sums: [UInt64: [String: (pid: Int32, image: UInt64, matched: UInt64, fired: UInt64)]] = [:]
        for i in 0..<statCapacity {
            let e = statistic(i)
            let key = aspects_load_acquire_u64(field(e, \aspects_process_stat.key))
            if key == 0 { continue }
            let serial = key >> 22
            let pid = Int32(bitPattern: UInt32(key & 0x3fffff))
            let image = aspects_load_acquire_u64(field(e, \aspects_process_stat.image))
            // one process image may hold two entries (two threads claimed at once): summed
            let old = sums[serial, default: [:]]["\(pid)/\(image)"] ?? (pid, image, 0, 0)
            sums[serial, default: [:]]["\(pid)/\(image)"] = (pid, image,
                Self.saturatingSum(old.matched, aspects_load_acquire_u64(field(e, \aspects_process_stat.matched))),
                Self.saturatingSum(old.fired, aspects_load_acquire_u64(field(e, \aspects_process_stat.fired))))
        }
        return sums.mapValues { Array($0.values) }
    }

    func describe(_ r: inout aspects_rule, slot: Int, state: TableRule.State) -> TableRule {
        let id = withUnsafeBytes(of: r.id) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let export = Int(r.named_export)
        let function = export < catalog.functions.count ? catalog.functions[export] : nil
        let group = Int(r.group) < catalog.groups.count ? catalog.groups[Int(r.group)] : nil
        let names = group.map { $0.members.map { catalog.functions[$0].name } } ?? []
        // Matchers hold the group's argument indices: name them after the primary prototype.
        let sig = group.map { catalog.primary(of: $0).signature }
        let position = ["before", "instead", "after"][min(Int(r.position), 2)]

        var actions: [String] = []
        let bits = r.actions
        let returnsCode = r.flags & ASPECTS_RULE_RETURN_IS_CODE.rawValue != 0
        let errnoName = ErrorNames.errnoName(r.errno_value) ?? String(r.errno_value)
        if bits & ASPECTS_ACTION_RETURN.rawValue != 0 {
            var text = "return \(r.return_value)"
            if returnsCode, group?.failure == .eaiCode, let n = ErrorNames.eaiName(Int32(truncatingIfNeeded: r.return_value)) { text += " (\(n))" }
            else if returnsCode, let n = ErrorNames.errnoName(Int32(truncatingIfNeeded: r.return_value)) { text += " (\(n))" }
            if bits & ASPECTS_ACTION_ERRNO.rawValue != 0 { text += " errno \(errnoName)" }
            actions.append(text)
        } else if bits & ASPECTS_ACTION_ERRNO.rawValue != 0 {
            actions.append("errno \(errnoName)")
        }
        // `"fail": true` where the default depends on the descriptor; a stdio stream fault
        if r.flags & ASPECTS_RULE_DEFAULT_BY_KIND.rawValue != 0, let g = group, let last = actions.indices.last {
            let others = g.defaultByKind.keys.sorted().filter { $0 != .file }.map { "\($0) \(g.defaultByKind[$0]!)" }
            if !others.isEmpty { actions[last] += " (on a file; " + others.joined(separator: ", ") + ")" }
        }
        if r.flags & ASPECTS_RULE_STREAM_FAULT.rawValue != 0, let last = actions.indices.last {
            actions[last] += " where the stream's system call fails"
        }
        if bits & ASPECTS_ACTION_HERRNO.rawValue != 0, let last = actions.indices.last {
            actions[last] += " h_errno \(ErrorNames.hErrnoName(r.errno_value) ?? String(r.errno_value))"
        }
        if bits & ASPECTS_ACTION_DELAY.rawValue != 0 { actions.append("delay \(Self.formatDuration(r.delay_ns))") }
        if bits & ASPECTS_ACTION_SIGNAL.rawValue != 0 { actions.append("signal \(ErrorNames.signalName(Int32(truncatingIfNeeded: r.signal_number)) ?? String(r.signal_number))") }
        if bits & ASPECTS_ACTION_ARGS.rawValue != 0 {
            for i in 0..<min(Int(r.arg_set_count), Int(ASPECTS_MAX_ARG_SETS)) {
                actions.append("set arg \(r.arg_set_index(at: i) ?? 0) = \(r.arg_set_value(at: i) ?? 0)")
            }
        }
        if bits & ASPECTS_ACTION_LOG.rawValue != 0 { actions.append("log") }

        var conditions: [String] = []
        if r.nth != 0 { conditions.append("nth \(r.nth)") }
        if r.flags & ASPECTS_RULE_EVERY_FROM.rawValue != 0 {
            conditions.append("first \(r.after &+ 1)")
        } else if r.after != 0 {
            conditions.append("after \(r.after)")
        }
        if r.every != 0 { conditions.append("every \(r.every)") }
        if r.times != 0 { conditions.append("times \(r.times)") }
        let strings = withUnsafeBytes(of: r.strings) { Array($0) }
        // A rule on several functions: where each matcher's argument sits in the other groups
        // (after the group list), shown where it differs from the rule's own function.
        let matcherCount = min(Int(r.matcher_count), Int(ASPECTS_MAX_MATCHERS))
        var memberArgs: [(name: String, args: [UInt8])] = []
        if r.flags & ASPECTS_RULE_FAMILY.rawValue != 0 {
            let off = Int(r.family_off), n = Int(r.family_len)
            if n <= Int(ASPECTS_MAX_FAMILY), off % 2 == 0, off + (2 + matcherCount) * n <= strings.count {
                for j in 0..<n {
                    let g = Int(UInt16(strings[off + 2 * j]) | UInt16(strings[off + 2 * j + 1]) << 8)
                    guard g < catalog.groups.count else { continue }
                    let row = off + 2 * n + j * matcherCount
                    memberArgs.append((catalog.primary(of: catalog.groups[g]).name, Array(strings[row..<(row + matcherCount)])))
                }
            }
        }
        for i in 0..<matcherCount {
            let m = r.matchers(at: i)!
            let argName = sig.flatMap { Int(m.arg) < $0.parameters.count ? $0.parameters[Int(m.arg)].name : nil }
            let elsewhere = memberArgs.filter { $0.args[i] != m.arg }.map { "\($0.name): arg \($0.args[i])" }
            let arg = "arg \(m.arg)" + ((argName.map { [$0] } ?? []) + elsewhere).joinedInParentheses
            let type = ABIType(rawValue: m.type) ?? .i64
            func show(_ v: UInt64) -> String { type.isSigned ? String(Int64(bitPattern: v)) : (type.isPointer || v > 0xffff ? "0x" + String(v, radix: 16) : String(v)) }
            switch UInt32(m.kind) {
            case ASPECTS_MATCH_EQ.rawValue: conditions.append("\(arg) == \(show(m.a))")
            case ASPECTS_MATCH_NE.rawValue: conditions.append("\(arg) != \(show(m.a))")
            case ASPECTS_MATCH_RANGE.rawValue: conditions.append("\(show(m.a)) <= \(arg) <= \(show(m.b))")
            case ASPECTS_MATCH_MASK_ANY.rawValue: conditions.append("\(arg) & 0x\(String(m.a, radix: 16)) != 0")
            case ASPECTS_MATCH_MASK_ALL.rawValue: conditions.append("\(arg) & 0x\(String(m.a, radix: 16)) == 0x\(String(m.a, radix: 16))")
            case ASPECTS_MATCH_FDPATH.rawValue:
                let lo = min(Int(m.str_off), strings.count), hi = min(lo + Int(m.str_len), strings.count)
                conditions.append("\(arg) fdpath \"\(String(decoding: strings[lo..<hi], as: UTF8.self))\"")
            case ASPECTS_MATCH_GLOB.rawValue, ASPECTS_MATCH_PREFIX.rawValue:
                let lo = min(Int(m.str_off), strings.count), hi = min(lo + Int(m.str_len), strings.count)
                let pattern = String(decoding: strings[lo..<hi], as: UTF8.self)
                conditions.append(UInt32(m.kind) == ASPECTS_MATCH_GLOB.rawValue ? "\(arg) glob \"\(pattern)\"" : "\(arg) prefix \"\(pattern)\"")
            default: conditions.append("\(arg) ?")
            }
        }
        let flags = r.flags
        if flags & ASPECTS_RULE_PROBABILITY.rawValue != 0 {
            let p = r.probability == UInt64.max ? 1.0 : Double(r.probability) / 18_446_744_073_709_551_616.0
            conditions.append("probability \(Self.formatProbability(p)) seed \(r.seed)")
        }
        if r.errno_choice_count > 0 {
            let names = (0..<min(Int(r.errno_choice_count), Int(ASPECTS_MAX_ERRNO_CHOICES))).map { i -> String in
                let code = r.errno_choices(at: i) ?? 0
                let failure = group?.failure
                return (failure == .eaiCode ? ErrorNames.eaiName(code) : failure == .nullHErrno ? ErrorNames.hErrnoName(code) : ErrorNames.errnoName(code)) ?? String(code)
            }
            if let first = actions.firstIndex(where: { $0.hasPrefix("return") }) {
                actions[first] = "fail with one of \(names.joined(separator: " ")) (seed \(r.seed))"
            }
        }
        func pattern(_ off: UInt16, _ len: UInt16) -> String {
            let lo = min(Int(off), strings.count), hi = min(lo + Int(len), strings.count)
            return String(decoding: strings[lo..<hi], as: UTF8.self)
        }
        // Advice as code and the data faults, before `log` (which stays the last word).
        func argText(_ i: UInt8) -> String {
            "arg \(i)" + (sig.flatMap { Int(i) < $0.parameters.count ? $0.parameters[Int(i)].name : nil }.map { " (\($0))" } ?? "")
        }
        var code: [String] = []
        if bits & ASPECTS_ACTION_SHORT.rawValue != 0 { code.append("short \(argText(r.data_count)) (seed \(r.seed))") }
        if bits & ASPECTS_ACTION_CORRUPT.rawValue != 0 {
            code.append("corrupt \(r.corrupt_bits) bit\(r.corrupt_bits == 1 ? "" : "s") of \(argText(r.data_buf)) (seed \(r.seed))")
        }
        if bits & ASPECTS_ACTION_CALL.rawValue != 0 { code.append("call \(pattern(r.call_off, r.call_len)):\(pattern(r.call_fn_off, r.call_fn_len))") }
        actions.insert(contentsOf: code, at: actions.last == "log" ? actions.count - 1 : actions.count)
        if flags & ASPECTS_RULE_HAS_PROCESS.rawValue != 0 { conditions.append("process \"\(pattern(r.process_off, r.process_len))\"") }
        if flags & ASPECTS_RULE_HAS_CALLER.rawValue != 0 { conditions.append("caller \"\(pattern(r.caller_off, r.caller_len))\"") }
        if flags & ASPECTS_RULE_HAS_SITE.rawValue != 0 {
            conditions.append("site \(CallSite(object: pattern(r.site_off, r.site_len), offset: r.site_offset))")
        }
        if flags & ASPECTS_RULE_HAS_RESULT.rawValue != 0 {
            if r.result_checks & 2 != 0 {
                conditions.append("failed with \(ErrorNames.errnoName(r.result_errno) ?? String(r.result_errno))")
            } else if r.result_checks & 1 != 0 {
                let lo = r.result_min == .min ? nil : r.result_min, hi = r.result_max == .max ? nil : r.result_max
                conditions.append(lo == hi && lo != nil ? "result == \(lo!)" : "result" + (lo.map { " >= \($0)" } ?? "") + (lo != nil && hi != nil ? " and" : "") + (hi.map { " <= \($0)" } ?? ""))
            }
            if r.result_checks & 4 != 0 {
                let argName = sig.flatMap { Int(r.result_arg) < $0.parameters.count ? $0.parameters[Int(r.result_arg)].name : nil }
                conditions.append("result < arg \(r.result_arg)" + (argName.map { " (\($0))" } ?? ""))
            }
        }
        if flags & ASPECTS_RULE_ONCE_PROCESS.rawValue != 0 { conditions.append("once per process") }
        if flags & ASPECTS_RULE_ONCE_HIERARCHY.rawValue != 0 { conditions.append("once per hierarchy") }
        if flags & ASPECTS_RULE_AUTOREMOVE.rawValue != 0 { conditions.append("autoRemove") }
        // A rule on several functions: the other groups' names too, and all of them as its symbol.
        var symbol = function?.name ?? "?"
        var allNames = names
        if flags & ASPECTS_RULE_FAMILY.rawValue != 0 {
            let off = Int(r.family_off), n = Int(r.family_len)
            if n <= Int(ASPECTS_MAX_FAMILY), off % 2 == 0, off + 2 * n <= strings.count {
                var primaries = [symbol]
                for i in 0..<n {
                    let g = Int(UInt16(strings[off + 2 * i]) | UInt16(strings[off + 2 * i + 1]) << 8)
                    guard g < catalog.groups.count else { continue }
                    primaries.append(catalog.primary(of: catalog.groups[g]).name)
                    allNames += catalog.groups[g].members.map { catalog.functions[$0].name }
                }
                symbol = primaries.joined(separator: "|")
            }
        }
        let scope = r.scope == ASPECTS_SCOPE_TABLE.rawValue ? "table" : r.scope == ASPECTS_SCOPE_THREAD.rawValue ? "thread"
            : r.scope == ASPECTS_SCOPE_HIERARCHY.rawValue ? "hierarchy" : "process"
        return TableRule(slot: slot, id: id, state: state, symbol: symbol, names: allNames, position: position,
                         actions: actions, conditions: conditions, scope: scope,
                         matched: aspects_load_acquire_u64(&r.matched), fired: aspects_load_acquire_u64(&r.fired),
                         hierarchiesFull: UInt64(aspects_load_acquire_u32(&r.hierarchies_full)),
                         serial: r.serial, addedNanoseconds: r.added_ns,
                         removedNanoseconds: state == .removed ? r.removed_ns : nil,
                         removedByPID: state == .removed ? Int32(bitPattern: r.removed_by_pid) : nil,
                         seed: (flags & ASPECTS_RULE_PROBABILITY.rawValue != 0 || r.errno_choice_count > 0) ? r.seed : nil)
    }

    static func formatProbability(_ p: Double) -> String {
        var s = String(format: "%.6f", p)
        while s.hasSuffix("0") { s.removeLast() }
        if s.hasSuffix(".") { s.removeLast() }
        return s
    }

    static func formatDuration(_ ns: UInt64) -> String {
        if ns % 1_000_000_000 == 0 { return "\(ns / 1_000_000_000)s" }
        if ns % 1_000_000 == 0 { return "\(ns / 1_000_000)ms" }
        if ns % 1_000 == 0 { return "\(ns / 1_000)us" }
        return "\(ns)ns"
    }
}

/// One record of the event ring.
public struct TableEvent: Sendable, Equatable {
    public var index: UInt64
    public var kind: String
    public var timeNanoseconds: UInt64
    public var pid: Int32
    public var tid: Int32
    public var rule: String
    public var symbol: String
    public var position: String
    public var callNumber: UInt64
    public var arguments: [String]
    public var returnValue: Int64
    public var errnoName: String?
    public var hierarchy: UInt64 = 0
    public var seed: UInt64 = 0
    /// The return value rendered by its type (a double as a double, a pointer in hex).
    public var returnText = ""
    /// Where the call came from (nil when the preload could not tell).
    public var site: CallSite?
    /// A rule with `"context": true`: the call's calling context, the site first (nil when the
    /// rule records none, or the preload could not unwind there).
    public var context: CallContext?
    /// `unavailable`: why the rule's `call` function did not run (the call went on without it).
    public var reason: String?

    public var json: JSONNode.Value {
        JSONOut.object([
            ("index", JSONOut.int(index)), ("kind", .string(kind)), ("timeNs", JSONOut.int(timeNanoseconds)),
            ("pid", JSONOut.int(pid)), ("tid", JSONOut.int(tid)), ("hierarchy", JSONOut.int(hierarchy)),
            ("rule", .string(rule)), ("seed", JSONOut.int(seed)), ("symbol", .string(symbol)),
            ("position", .string(position)), ("call", JSONOut.int(callNumber)),
            ("args", JSONOut.array(arguments.map { .string($0) })), ("return", JSONOut.int(returnValue)),
            ("returnText", .string(returnText)),
            ("errno", errnoName.map { .string($0) }),
            ("site", site.map { .string($0.description) }),
            ("context", context.map { JSONOut.array($0.frames.map { .string($0.description) }) }),
            ("reason", reason.map { .string($0) }),
        ])
    }
}

extension AdviceTable {
    /// The calling context an event recorded: its site, then the callers (nil: none recorded,
    /// or a frame the record cannot name, whose hash then would not be the preload's).
    package static func context(of e: aspects_event, site: CallSite?) -> CallContext? {
        let depth = Int(e.context_depth)
        guard let site, depth >= 1, depth <= Int(ASPECTS_MAX_CONTEXT_DEPTH) else { return nil }
        var frames = [site]
        var copy = e
        for i in 1..<depth {
            let name = String(cString: aspects_event_context_object(&copy, UInt32(i - 1)))
            guard !name.isEmpty else { return nil }
            frames.append(CallSite(object: name, offset: aspects_event_context_offset(&copy, UInt32(i - 1))))
        }
        let context = CallContext(frames)
        return context.hash == e.context_hash ? context : nil
    }

    /// Events from `cursor` on (an event index; 0 = the oldest still in the ring). Returns the
    /// events read, the cursor to continue from and how many were lost to ring overrun.
    /// Where `events` starts when no --since is given: events before it were cleared.
    package var eventCursor: UInt64 { aspects_load_acquire_u64(field(header, \.event_cursor)) }

    /// Events ever recorded (the next event's index).
    package var eventHead: UInt64 { aspects_load_acquire_u64(field(header, \.event_head)) }

    /// `events --clear`: every event recorded so far counts as read. The ring itself is left
    /// alone (attached processes keep appending); only aspectctl reads the cursor. Returns it.
    @discardableResult
    package func clearEvents() -> UInt64 {
        aspects_raise_u64(field(header, \.event_cursor), eventHead)
    }

    package func events(from cursor: UInt64) -> (events: [TableEvent], next: UInt64, dropped: UInt64) {
        let head = aspects_load_acquire_u64(field(header, \.event_head))
        let capacity = UInt64(eventCapacity)
        var start = cursor
        var dropped: UInt64 = 0
        if head > capacity && start < head - capacity {
            dropped = head - capacity - start
            start = head - capacity
        }
        var out: [TableEvent] = []
        var i = start
        while i < head {
            let e = event(Int(i & (capacity - 1)))
            let seq = field(e, \.seq)
            let s1 = aspects_load_acquire_u64(seq)
            if s1 == 2 &* i &+ 1 { break } // still being written: stop here, resume later
            if s1 < 2 &* i &+ 1 {
                // An earlier lap's writer holds the record (odd): i's writer cannot claim it and
                // drops its event (events.c never takes a claim over; a claim whose writer died
                // stays). Otherwise i's writer has its position but not yet the record.
                if s1 & 1 == 1 {
                    dropped += 1
                    i += 1
                    continue
                }
                break
            }
            var copy = e.pointee
            aspects_fence_acquire()
            if s1 != 2 &* i &+ 2 || aspects_load_acquire_u64(seq) != s1 {
                dropped += 1 // overwritten by a writer one lap ahead
                i += 1
                continue
            }
            out.append(decode(&copy, index: i))
            i += 1
        }
        return (out, i, dropped)
    }

    /// The bits of a register slot that belong to an argument of `type` (flags, modes).
    static func lowBits(_ v: UInt64, _ type: ABIType) -> UInt64 {
        let bits = type.bits
        return bits > 0 && bits < 64 ? v & ((1 << UInt64(bits)) - 1) : v
    }

    /// An integer argument as its declared type: the preload records the 64-bit register
    /// slot, whose bits above a narrower type's width are not part of the value.
    package static func integerText(_ v: UInt64, _ type: ABIType) -> String {
        let bits = type.bits
        if bits >= 64 || bits == 0 { return type.isSigned ? String(Int64(bitPattern: v)) : String(v) }
        let shift = UInt64(64 - bits)
        return type.isSigned ? String(Int64(bitPattern: v << shift) >> Int64(shift)) : String((v << shift) >> shift)
    }

    /// The named flags an export's argument takes (`flags` of open: O_CREAT ...), if any.
    func flagSet(of function: CatalogFunction?, argument a: Int) -> FlagSet? {
        guard let f = function, let g = f.groupIndex(ofArgument: a) else { return nil }
        guard let name = catalog.group(of: f).flagArguments[g] else { return nil }
        return catalog.flagSets[name]
    }

    func decode(_ e: inout aspects_event, index: UInt64) -> TableEvent {
        let export = Int(e.export_index)
        let function = export < catalog.functions.count ? catalog.functions[export] : nil
        // Exports past the catalog's are functions advised from a prototype.
        let protoName = function == nil ? prototypeStatus(export - catalog.functions.count)?.name : nil
        let text = withUnsafeBytes(of: e.string) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        var args: [String] = []
        for a in 0..<min(Int(e.arg_count), 6) {
            let v = aspects_event_arg(&e, UInt32(a))
            let type = ABIType(rawValue: aspects_event_arg_type(&e, UInt32(a))) ?? .u64
            if Int(e.string_arg) == a && type == .string {
                let truncated = text.utf8.count >= Int(ASPECTS_EVENT_STRING_SIZE) - 1
                args.append(v == 0 ? "NULL" : "\"" + text + (truncated ? "\"..." : "\""))
            } else if type.isPointer {
                args.append(v == 0 ? "NULL" : "0x" + String(v, radix: 16))
            } else if type == .structure {
                args.append("{…}")
            } else if type == .f64 {
                args.append(String(Double(bitPattern: v)))
            } else if type == .f32 {
                args.append(String(Float(bitPattern: UInt32(truncatingIfNeeded: v))))
            } else if let set = flagSet(of: function, argument: a) {
                args.append(set.render(Self.lowBits(v, type)))
            } else if let f = function, a < f.signature.parameters.count, f.signature.parameters[a].spelling.hasSuffix("mode_t") {
                // open's variadic mode is passed only with O_CREAT or O_TMPFILE (open(2));
                // otherwise the register holds whatever it held, and strace shows none either.
                if a >= f.fixedCount, let flags = args.first(where: { $0.hasPrefix("O_") }),
                   !flags.split(separator: "|").contains(where: { $0 == "O_CREAT" || $0 == "O_TMPFILE" }) { continue }
                args.append("0" + String(Self.lowBits(v, type), radix: 8))
            } else {
                args.append(Self.integerText(v, type))
            }
        }
        let kind: String
        switch UInt32(e.kind) {
        case ASPECTS_EVENT_FIRED.rawValue: kind = "fired"
        case ASPECTS_EVENT_LOGGED.rawValue: kind = "logged"
        case ASPECTS_EVENT_SHADOWED.rawValue: kind = "shadowed"
        case ASPECTS_EVENT_UNAVAILABLE.rawValue: kind = "unavailable"
        case ASPECTS_EVENT_UNTAKEN.rawValue: kind = "untaken"
        default: kind = "unknown"
        }
        let rule = withUnsafeBytes(of: e.rule_id) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        var event = TableEvent(index: index, kind: kind, timeNanoseconds: e.time_ns, pid: Int32(bitPattern: e.pid), tid: Int32(bitPattern: e.tid),
                               rule: rule, symbol: function?.name ?? protoName ?? "?", position: ["before", "instead", "after"][min(Int(e.position), 2)],
                               callNumber: e.call_number, arguments: args, returnValue: e.ret,
                               errnoName: e.err == 0 ? nil : (ErrorNames.errnoName(e.err) ?? String(e.err)))
        event.hierarchy = e.hierarchy
        event.seed = e.seed
        let object = withUnsafeBytes(of: e.caller_object) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        if !object.isEmpty { event.site = CallSite(object: object, offset: e.caller_offset) }
        event.context = Self.context(of: e, site: event.site)
        switch ABIType(rawValue: e.ret_type) ?? .i64 {
        case .f64: event.returnText = String(Double(bitPattern: UInt64(bitPattern: e.ret)))
        case .f32: event.returnText = String(Float(bitPattern: UInt32(truncatingIfNeeded: e.ret)))
        case .pointer, .string: event.returnText = e.ret == 0 ? "NULL" : "0x" + String(UInt64(bitPattern: e.ret), radix: 16)
        case .void: event.returnText = "void"
        case .structure: event.returnText = "{…}"
        default: event.returnText = String(e.ret)
        }
        // A `call` rule's event is written before its function runs (so that a crash leaves
        // it): its result is what the function started from, not what it returned.
        let slot = Int(e.rule_slot)
        if kind == "fired", e.position != UInt8(ASPECTS_POSITION_BEFORE.rawValue), slot < ruleCapacity,
           field(self.rule(slot), \aspects_rule.serial).pointee == e.rule_serial,
           field(self.rule(slot), \aspects_rule.actions).pointee & ASPECTS_ACTION_CALL.rawValue != 0 {
            event.returnText += " (before the advice ran)"
        }
        if kind == "untaken" {
            event.reason = "the stream made no system call at this call (served from or into its buffer), so a real error cannot happen here: the call ran as it does"
        }
        if kind == "unavailable" {
            // `ret` holds why, not a result: the call went on to the original (or a later rule).
            event.reason = Self.unavailableReason(e.ret)
            event.returnText = ""
        }
        return event
    }

    /// The words for an ASPECTS_EVENT_UNAVAILABLE record's reason (enum aspects_advice_unavailable).
    static func unavailableReason(_ code: Int64) -> String {
        switch UInt32(truncatingIfNeeded: code) {
        case ASPECTS_ADVICE_NOT_LOADED_HERE.rawValue:
            return "the advice object is not loaded yet, and this call came where loading it is not safe (a signal handler may be running); a later call loads it"
        case ASPECTS_ADVICE_LOAD_FAILED.rawValue: return "the advice object could not be loaded (ASPECTS_DEBUG=1 prints the loader's message)"
        case ASPECTS_ADVICE_NO_FUNCTION.rawValue: return "the advice object does not define such a function itself"
        case ASPECTS_ADVICE_NO_VERSION.rawValue: return "the advice object was not built with aspects_advice.h"
        case ASPECTS_ADVICE_OTHER_VERSION.rawValue: return "the advice object was built with another major version of aspects_advice.h"
        case ASPECTS_ADVICE_TOO_MANY.rawValue: return "the process has loaded as many advice objects as it holds"
        case ASPECTS_ADVICE_BAD_TARGET.rawValue: return "the rule's call target is damaged in the table"
        case ASPECTS_ADVICE_UNTRUSTED.rawValue:
            return "the table is shared with a group or the process is root's, and someone else than the process's user or root could change the advice object or a directory on its path (or it is named through a symbolic link, or by a bare name)"
        default: return "unknown reason \(code)"
        }
    }
}

extension Array where Element == String {
    /// ` (a; b)`, or nothing for an empty list.
    fileprivate var joinedInParentheses: String { isEmpty ? "" : " (" + joined(separator: "; ") + ")" }
}
