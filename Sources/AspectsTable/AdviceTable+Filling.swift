#if canImport(Glibc)
import Glibc
#endif
import CAspectsABI
import AspectsCore
import AspectsRules

// Filling a slot from a compiled rule, and the rule's stored source text.
extension AdviceTable {
    /// Writes a rule into a slot; returns the serial it got.
    @discardableResult
    func fill(slot: Int, with c: CompiledRule, id: String, seed: UInt64) -> UInt64 {
        let r = rule(slot)
        let seq = field(r, \.seq)
        let s = seq.pointee | 1
        aspects_store_release_u32(seq, s)
        aspects_fence_release()
        // Counters and strings are zeroed with the rest: a reused slot starts fresh.
        UnsafeMutableRawPointer(r).advanced(by: 4).initializeMemory(as: UInt8.self, repeating: 0, count: MemoryLayout<aspects_rule>.size - 4)
        // The values the rule holds as they are (config/rule-slot.spec's `<-` fields), then the rest.
        c.storeSpecFields(in: r)
        let idBytes = Array(id.utf8.prefix(Int(ASPECTS_RULE_ID_SIZE) - 1))
        let idPtr = UnsafeMutableRawPointer(field(r, \.id))
        idBytes.withUnsafeBytes { idPtr.copyMemory(from: $0.baseAddress!, byteCount: idBytes.count) }
        r.pointee.matcher_count = UInt32(c.matchers.count)
        var offset = 0
        let strings = UnsafeMutableRawPointer(field(r, \.strings))
        for (i, m) in c.matchers.enumerated() {
            let mp = r.matchers(at: i)!
            mp.pointee.arg = UInt8(m.arg)
            mp.pointee.kind = m.kind
            mp.pointee.type = m.type.rawValue
            mp.pointee.a = m.a
            mp.pointee.b = m.b
            if let pattern = m.pattern {
                let bytes = Array(pattern.utf8)
                bytes.withUnsafeBytes { (strings + offset).copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
                mp.pointee.str_off = UInt16(offset)
                mp.pointee.str_len = UInt16(bytes.count)
                offset += bytes.count + 1
            }
        }
        func put(_ pattern: String) -> (UInt16, UInt16) {
            let bytes = Array(pattern.utf8)
            bytes.withUnsafeBytes { (strings + offset).copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
            defer { offset += bytes.count + 1 }
            return (UInt16(offset), UInt16(bytes.count))
        }
        if let p = c.processPattern { (r.pointee.process_off, r.pointee.process_len) = put(p) }
        if let p = c.callerPattern { (r.pointee.caller_off, r.pointee.caller_len) = put(p) }
        if let s = c.site {
            (r.pointee.site_off, r.pointee.site_len) = put(s.object)
            r.pointee.site_offset = s.offset
        }
        if let context = c.context {
            r.pointee.context_depth = UInt32(context.frames.count)
            r.pointee.context_hash = context.hash
        }
        if let object = c.callObject, let function = c.callFunction {
            (r.pointee.call_off, r.pointee.call_len) = put(object)
            (r.pointee.call_fn_off, r.pointee.call_fn_len) = put(function)
        }
        if let bytes = c.resultBytes {
            // a struct result (the preload copies result_len bytes, bounded by the struct's size)
            bytes.withUnsafeBytes { (strings + offset).copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
            r.pointee.result_off = UInt16(offset)
            r.pointee.result_len = UInt16(bytes.count)
            offset += bytes.count
        }
        if !c.familyGroups.isEmpty {
            // the other groups of a rule on several functions (aspects_rule_in_group)
            offset = (offset + 1) / 2 * 2
            for (i, g) in c.familyGroups.enumerated() {
                var v = UInt16(g)
                withUnsafeBytes(of: &v) { (strings + offset + 2 * i).copyMemory(from: $0.baseAddress!, byteCount: 2) }
            }
            r.pointee.family_off = UInt16(offset)
            r.pointee.family_len = UInt16(c.familyGroups.count)
            offset += 2 * c.familyGroups.count
            // then each matcher's argument number in each of those groups (aspects_abi.h)
            for i in c.familyGroups.indices {
                let args = i < c.familyArgs.count ? c.familyArgs[i] : c.matchers.map { UInt8($0.arg) }
                for (k, a) in args.prefix(c.matchers.count).enumerated() { (strings + offset + i * c.matchers.count + k).storeBytes(of: a, as: UInt8.self) }
            }
            offset += c.matchers.count * c.familyGroups.count
        }
        r.pointee.seed = seed
        r.pointee.rule_key = FNV1a.hash(id)
        r.pointee.errno_choice_count = UInt32(c.errnoChoices.count)
        for (i, e) in c.errnoChoices.enumerated() { r.errno_choices(at: i)?.pointee = e }
        r.pointee.arg_set_count = UInt32(c.argSets.count)
        for (i, s) in c.argSets.enumerated() { r.arg_set_index(at: i)?.pointee = s.index; r.arg_set_value(at: i)?.pointee = s.value }
        let serial = header.pointee.next_serial
        header.pointee.next_serial = serial &+ 1 // checked before the batch; any process can write it
        r.pointee.serial = serial
        r.pointee.added_ns = System.realtimeNanoseconds()
        r.pointee.named_export = c.prototype != nil ? Self.prototypeFlag | UInt32(c.group - catalog.groups.count) : UInt32(c.function.exportIndex)
        r.pointee.batch = batch
        r.pointee.state = ASPECTS_RULE_ADDING.rawValue
        aspects_store_release_u32(seq, s &+ 1)
        writeSource(slot: slot, serial: serial, Self.stampedSource(c, id: id, seed: RuleCompiler.needsSeed(c) ? seed : nil))
        return serial
    }

    /// The rule's JSON as added, with its id and (drawn or given) seed written in, so that
    /// adding it again gives the same rule; nil for a rule made in code.
    static func stampedSource(_ c: CompiledRule, id: String, seed: UInt64?) -> String? {
        guard case .object(var members)? = c.rule.source else { return nil }
        func node(_ v: JSONNode.Value) -> JSONNode { JSONNode(value: v, line: 0, column: 0) }
        members.removeAll { $0.key == "id" }
        members.insert((key: "id", value: node(.string(id))), at: 0)
        if let seed {
            var when: [(key: String, value: JSONNode)] = []
            if let i = members.firstIndex(where: { $0.key == "when" }), case .object(let w) = members[i].value.value { when = w; members.remove(at: i) }
            when.removeAll { $0.key == "seed" }
            when.append((key: "seed", value: node(.number(String(seed)))))
            members.append((key: "when", value: node(.object(when))))
        }
        return JSONNode.Value.object(members).rendered(pretty: false)
    }

    func writeSource(slot: Int, serial: UInt64, _ text: String?) {
        let src = source(slot)
        let bytes = Array((text ?? "").utf8)
        let room = MemoryLayout<aspects_rule_source>.size - MemoryLayout<aspects_rule_source>.offset(of: \.text)!
        src.pointee.serial = serial
        src.pointee.length = bytes.count <= room ? UInt32(bytes.count) : 0
        if !bytes.isEmpty && bytes.count <= room {
            let text = UnsafeMutableRawPointer(src) + MemoryLayout<aspects_rule_source>.offset(of: \.text)!
            bytes.withUnsafeBytes { text.copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
        }
    }

    /// The JSON a slot's rule was added with (nil: none kept, or the slot has moved on).
    func sourceText(slot: Int, serial: UInt64) -> String? {
        guard slot >= 0, slot < ruleCapacity else { return nil }
        let src = source(slot)
        let room = MemoryLayout<aspects_rule_source>.size - MemoryLayout<aspects_rule_source>.offset(of: \.text)!
        let length = Int(src.pointee.length)
        guard src.pointee.serial == serial, length > 0, length <= room else { return nil }
        let text = UnsafeRawPointer(src) + MemoryLayout<aspects_rule_source>.offset(of: \.text)!
        let copy = String(decoding: UnsafeRawBufferPointer(start: text, count: length), as: UTF8.self)
        // another writer may have taken the slot while we copied
        return src.pointee.serial == serial ? copy : nil
    }
}
