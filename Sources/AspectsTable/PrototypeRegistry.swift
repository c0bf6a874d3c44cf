import CAspectsABI
import AspectsCore
import AspectsRules

/// Functions advised from a rule's prototype (not in the catalog) are registered in the
/// table: name and signature, so every process builds the same stub, and a group of their own
/// after the catalog's. The preload rewrites the GOT slots that import them (proto.c).
extension AdviceTable {
    static let prototypeFlag: UInt32 = 0x8000_0000

    package func proto(_ k: Int) -> UnsafeMutablePointer<aspects_proto_symbol> { element(geometry.protos, k) }

    func protoName(_ p: UnsafeMutablePointer<aspects_proto_symbol>) -> String {
        withUnsafeBytes(of: p.pointee.name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }

    package var anyPrototypeActive: Bool { (0..<Int(ASPECTS_PROTO_CAPACITY)).contains { proto($0).pointee.state == 1 } }

    /// Assigns each prototype rule its entry (existing, or a free one reserved for this batch)
    /// and group. Writes nothing; throws if a name comes with another signature or no entry is free.
    func planPrototypes(_ rules: [CompiledRule]) throws(AspectsError) -> (rules: [CompiledRule], newEntries: [Int: CompiledRule]) {
        var out = rules
        var planned: [String: Int] = [:]
        var newEntries: [Int: CompiledRule] = [:]
        for (i, c) in rules.enumerated() {
            guard let sig = c.prototype else { continue }
            let label = c.rule.id.map { "rule \"\($0)\"" } ?? "rule on \(sig.name)"
            var k = planned[sig.name] ?? (0..<Int(ASPECTS_PROTO_CAPACITY)).first { proto($0).pointee.state == 1 && protoName(proto($0)) == sig.name }
            if let existing = k, newEntries[existing] == nil {
                let e = proto(existing).pointee
                let args = withUnsafeBytes(of: e.args) { Array($0.prefix(Int(e.nargs))) }
                if e.ret != sig.returnType.rawValue || args != sig.parameters.map(\.type.rawValue) || Int(e.nfixed) != c.prototypeFixedCount {
                    throw AspectsError(.prototypeMismatch, rule: label, field: "prototype",
                                       "\(sig.name) is already advised with another prototype",
                                       fix: "use the same prototype as its other rules")
                }
            } else if let existing = k, let other = newEntries[existing], !other.prototype!.abiEquals(sig) || other.prototypeFixedCount != c.prototypeFixedCount
                        || other.prototypeStructs != c.prototypeStructs {
                throw AspectsError(.prototypeMismatch, rule: label, field: "prototype", "two rules give \(sig.name) different prototypes")
            }
            if k == nil {
                k = (0..<Int(ASPECTS_PROTO_CAPACITY)).first { proto($0).pointee.state == 0 && newEntries[$0] == nil }
                guard let free = k else {
                    throw AspectsError(.limit, rule: label, field: "symbol", "a table advises at most \(ASPECTS_PROTO_CAPACITY) functions from prototypes",
                                       fix: "remove the rules of functions no longer needed")
                }
                newEntries[free] = c
            }
            planned[sig.name] = k!
            out[i].group = catalog.groups.count + k!
        }
        return (out, newEntries)
    }

    /// Publishes new entries and counts the rules of each (under the write lock).
    func registerPrototypes(_ rules: [CompiledRule], newEntries: [Int: CompiledRule]) {
        guard rules.contains(where: { $0.prototype != nil }) else { return }
        for (k, c) in newEntries {
            let sig = c.prototype!
            let fixed = c.prototypeFixedCount
            let p = proto(k)
            let seq = field(p, \aspects_proto_symbol.seq)
            let s = seq.pointee | 1
            aspects_store_release_u32(seq, s)
            aspects_fence_release()
            UnsafeMutableRawPointer(p).advanced(by: 4).initializeMemory(as: UInt8.self, repeating: 0, count: MemoryLayout<aspects_proto_symbol>.size - 4)
            p.pointee.group = UInt32(catalog.groups.count + k)
            p.pointee.ret = sig.returnType.rawValue
            p.pointee.nargs = UInt8(sig.parameters.count)
            p.pointee.nfixed = UInt8(fixed)
            p.pointee.flags = sig.isVariadic ? 1 : 0
            for (i, param) in sig.parameters.enumerated() { aspects_proto_set_arg(p, UInt32(i), param.type.rawValue) }
            // structs by value: layouts, and which one each argument (and the result) is
            p.pointee.struct_count = UInt8(c.prototypeStructs.count)
            for (si, fields) in c.prototypeStructs.enumerated() {
                aspects_proto_set_struct_count(p, UInt32(si), UInt8(fields.count))
                for (fi, t) in fields.enumerated() { aspects_proto_set_struct_field(p, UInt32(si), UInt32(fi), t.rawValue) }
            }
            for i in 0..<Int(ASPECTS_MAX_ARGS) { aspects_proto_set_arg_struct(p, UInt32(i), UInt8(ASPECTS_NO_STRUCT)) }
            for (i, param) in sig.parameters.enumerated() {
                if let n = param.structName, let si = c.prototypeStructOrder.firstIndex(of: n) { aspects_proto_set_arg_struct(p, UInt32(i), UInt8(si)) }
            }
            p.pointee.ret_struct = UInt8(sig.returnStructName.flatMap { c.prototypeStructOrder.firstIndex(of: $0) } ?? Int(ASPECTS_NO_STRUCT))
            let name = Array(sig.name.utf8)
            name.withUnsafeBytes { UnsafeMutableRawPointer(aspects_proto_name(p)!).copyMemory(from: $0.baseAddress!, byteCount: name.count) }
            let serial = header.pointee.next_serial
            header.pointee.next_serial = serial &+ 1
            p.pointee.serial = serial
            p.pointee.status = ASPECTS_PROTO_PENDING.rawValue
            p.pointee.state = 1
            aspects_store_release_u32(seq, s &+ 1)
        }
        for c in rules where c.prototype != nil {
            proto(c.group - catalog.groups.count).pointee.rules &+= 1 // a count any process can write: never trap
        }
        _ = aspects_fetch_add_u64(field(header, \aspects_table_header.proto_generation), 1)
        updateDlopenArm()
    }

    /// Recounts each prototype entry's rules from the live rule slots and frees entries no
    /// rule names any more (the last rule of a function left; a registration of a rolled-back
    /// batch; a half-written entry). Called by normalize() and repair(), under the write lock;
    /// the preload puts the original slot values back when an entry is freed.
    func recountPrototypes() {
        var counts = [UInt32](repeating: 0, count: Int(ASPECTS_PROTO_CAPACITY))
        for slot in 0..<ruleCapacity where rule(slot).pointee.state == ASPECTS_RULE_ACTIVE.rawValue {
            let export = rule(slot).pointee.named_export
            if export & Self.prototypeFlag != 0, Int(export & ~Self.prototypeFlag) < counts.count { counts[Int(export & ~Self.prototypeFlag)] += 1 }
        }
        var changed = false
        for k in 0..<Int(ASPECTS_PROTO_CAPACITY) {
            let p = proto(k)
            let seq = field(p, \aspects_proto_symbol.seq)
            let odd = seq.pointee & 1 == 1
            if odd || (p.pointee.state == 1 && counts[k] == 0) || p.pointee.rules != counts[k] {
                let s = seq.pointee | 1
                aspects_store_release_u32(seq, s)
                aspects_fence_release()
                if odd || counts[k] == 0 { if p.pointee.state != 0 { changed = true }; p.pointee.state = 0 }
                p.pointee.rules = counts[k]
                aspects_store_release_u32(seq, s &+ 1)
            }
        }
        if changed { _ = aspects_fetch_add_u64(field(header, \aspects_table_header.proto_generation), 1) }
        updateDlopenArm()
    }

    /// Without --live-prototypes a prototype rule reaches a running process at its next call of
    /// an advised function, not before: which processes of this table that concerns, and the
    /// fix. nil when there is nothing to say (no prototype rule, a live table, nothing running).
    package func livePrototypeNote(_ rules: [CompiledRule]) -> String? {
        guard !livePrototypes, rules.contains(where: { $0.prototype != nil }) else { return nil }
        var latest: [Int32: Attachment] = [:]
        for a in attachments() where a.isRunning { latest[a.pid] = a } // an exec'd process: its last image
        guard !latest.isEmpty else { return nil }
        let shown = latest.values.sorted { $0.pid < $1.pid }
        var names = shown.prefix(8).map { "\($0.pid) (\($0.program.isEmpty ? "?" : $0.program))" }
        if shown.count > 8 { names.append("\(shown.count - 8) more") }
        return "the prototype rule(s) reach the running process(es) \(names.joined(separator: ", ")) only at their next call of an advised function, "
            + "not at their next call of the function itself (table \(name) was made without --live-prototypes); "
            + "to apply them at once, make the table with `aspectctl create --live-prototypes` (or run the program with `aspectctl run --live-prototypes`) and start the program again"
    }

    /// On a --live-prototypes table, each running process's watcher applies a prototype change
    /// as soon as the writer wakes it; this waits (at most `timeout` seconds) until every
    /// running process has, so that the change holds for its very next call once `add`
    /// returns. Returns the processes that had not applied it by then (a process that exec'd a
    /// static program, say, never will), each its latest image. Nothing to wait for on a table
    /// without the option, or when no prototype changed.
    package func awaitLivePrototypes(timeout: Double = 2) -> [Attachment] {
        guard livePrototypes else { return [] }
        let generation = aspects_load_acquire_u64(field(header, \aspects_table_header.proto_generation))
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: .seconds(timeout))
        while true {
            var latest: [Int32: Attachment] = [:]
            for a in attachments() where a.isRunning { latest[a.pid] = a } // an exec'd process: its last image
            // (a record whose word is still 0 has applied nothing yet: it is waited for)
            let late = latest.values.filter { $0.protosApplied.map { $0 < generation } ?? true }.sorted { $0.pid < $1.pid }
            if late.isEmpty || clock.now >= deadline { return late }
            usleep(1000)
        }
    }

    /// What `add` says of the processes awaitLivePrototypes waited for in vain.
    package static func lateLivePrototypeNote(_ late: [Attachment], timeout: Double = 2) -> String? {
        guard !late.isEmpty else { return nil }
        var names = late.prefix(8).map { "\($0.pid) (\($0.program.isEmpty ? "?" : $0.program))" }
        if late.count > 8 { names.append("\(late.count - 8) more") }
        return "the running process(es) \(names.joined(separator: ", ")) had not applied the prototype rule(s) \(Int(timeout)) s after they were added "
            + "(its watcher thread did not run in time — a loaded machine, an emulator — or there is none: it could not start, "
            + "or the process now runs a program that does not attach); they apply them as soon as their watcher runs, "
            + "or else at their next call of an advised function, if any"
    }

    /// dlopen is armed while prototype symbols exist, so that a library loaded later is
    /// rewritten too (the dispatcher applies them after the original dlopen returns).
    func updateDlopenArm() {
        let active = anyPrototypeActive
        for name in ["dlopen", "dlmopen"] {
            guard let group = catalog.function(named: name)?.groupIndex else { continue }
            let armedByRules = !currentSlots(of: group).isEmpty
            aspects_store_release_u8(armed(group), armedByRules || active ? 1 : 0)
        }
    }

    /// The status of a prototype rule's function, for `list`.
    func prototypeStatus(_ k: Int) -> (name: String, status: String)? {
        guard k < Int(ASPECTS_PROTO_CAPACITY) else { return nil }
        let p = proto(k).pointee
        let name = protoName(proto(k))
        let text: String
        switch p.status {
        case ASPECTS_PROTO_APPLIED.rawValue: text = "applied: \(p.patched) slot(s) in \(p.objects) object(s) of pid \(p.status_pid)"
        case ASPECTS_PROTO_PENDING.rawValue: text = "not applied yet: no process has attached since it was added"
        case ASPECTS_PROTO_NOT_IMPORTED.rawValue: text = "not applied: no object of pid \(p.status_pid) imports \(name)"
        case ASPECTS_PROTO_PROTECTED.rawValue: text = "not applied: pid \(p.status_pid) refused to open a RELRO page (mprotect)"
        case ASPECTS_PROTO_UNRESOLVED.rawValue: text = "partly applied: a lazy slot of \(name) could not be resolved in pid \(p.status_pid) (run with LD_BIND_NOW=1)"
        case ASPECTS_PROTO_NO_CLOSURE.rawValue: text = "not applied: libffi could not build the stub in pid \(p.status_pid)"
        case ASPECTS_PROTO_TOO_MANY.rawValue: text = "partly applied: more importing slots than a process tracks (pid \(p.status_pid))"
        default: text = "unknown status \(p.status)"
        }
        return (name, text)
    }
}
