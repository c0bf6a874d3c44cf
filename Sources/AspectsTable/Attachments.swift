#if canImport(Glibc)
import Glibc
#endif
import CAspectsABI

/// A process that attached a table (the preload records itself at start-up): what `run`,
/// `list` and `stats` use to tell "nothing fired" from "nothing was there to fire".
public struct Attachment: Sendable, Equatable {
    public var pid: Int32
    public var parentPID: Int32
    public var uid: UInt32
    public var hierarchy: UInt64
    public var attachedNanoseconds: UInt64
    /// The executable's path (its start cut off when longer than the record holds).
    public var program: String
    /// Whether that very process still runs (the pid and its start time both match).
    public var isRunning: Bool
    /// Its place among every attachment of the table (statistics entries name it, + 1).
    public var number: UInt64 = 0
    /// With ASPECTS_RECORD_CRASH=1 (explore's runs): the crash signal that ended this process
    /// image, or a fork child of it that did not exec (`crashPID` says which).
    public var crashSignal: Int32?
    public var crashPID: Int32?
    /// A crash signal a handler of the program's caught and did not return from (it exited or
    /// jumped out), whose stack the crash files hold (`crashPID` says whose): a crash "caught by
    /// the program's handler".
    public var crashCaught: Int32?
    /// Forwarding stubs it could not build (libffi missing, or refusing a signature), and the
    /// first one's export (an index into the catalog's functions; past them, a prototype's).
    public var stubFailures: UInt32 = 0
    public var firstStubFailure: Int?
    /// The table's prototype generation its last prototype pass applied (nil: none yet).
    public var protosApplied: UInt64?
}

/// Processes that found a table and refused it (another ABI version or catalog, a broken
/// layout). Kept at header offsets every ABI version shares, so they can be read from a table
/// this aspectctl cannot otherwise use.
package struct AttachFailures: Sendable, Equatable {
    package var count: UInt64
    package var lastPID: Int32
    package var lastReason: String

    /// Reads them from a table's header without validating the rest (its segment attached
    /// read-only, under the trust rule).
    package static func read(_ name: TableName) -> AttachFailures? {
        guard let (fd, segment) = try? TableFile.openTrusted(name, writable: false), let base = segment.base else { return nil }
        defer { aspects_segment_detach(base); Glibc.close(fd) }
        let header = base.loadUnaligned(as: aspects_table_header.self)
        guard header.magic == ASPECTS_MAGIC else { return nil }
        return AttachFailures(count: header.attach_failures, lastPID: Int32(bitPattern: header.last_failure_pid),
                              lastReason: Self.reason(header.last_failure_reason))
    }

    static func reason(_ code: UInt32) -> String {
        switch code {
        case ASPECTS_ATTACH_FAILED_ABI.rawValue: return "the table was written for another ABI version"
        case ASPECTS_ATTACH_FAILED_CATALOG.rawValue: return "the table was written for another catalog (aspectctl and libaspects.so differ)"
        case ASPECTS_ATTACH_FAILED_LAYOUT.rawValue: return "the table's layout does not add up"
        case 0: return ""
        default: return "unknown reason \(code)"
        }
    }
}

extension AdviceTable {
    /// The processes that attached this table, oldest first (the last ASPECTS_ATTACH_CAPACITY
    /// of them; `attachCount` says how many there were in all). Records being written, or
    /// damaged, are left out.
    package func attachments() -> [Attachment] {
        let head = aspects_load_acquire_u64(field(header, \.attach_head))
        let capacity = UInt64(ASPECTS_ATTACH_CAPACITY)
        let h = header.pointee
        let offset = Int(aspects_attachments_offset(h.group_capacity, h.rule_capacity, h.event_capacity, h.stat_capacity))
        guard offset + Int(capacity) * MemoryLayout<aspects_attachment>.stride <= size else { return [] }
        let records = (base + offset).assumingMemoryBound(to: aspects_attachment.self)
        let first = head > capacity ? head - capacity : 0
        var out: [Attachment] = []
        var i = first
        while i < head {
            let r = records + Int(i % capacity)
            let seq = field(r, \.seq)
            let s1 = aspects_load_acquire_u32(seq)
            let copy = r.pointee
            if s1 & 1 == 0, s1 != 0, aspects_load_acquire_u32(seq) == s1 {
                let program = withUnsafeBytes(of: copy.program) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                let pid = Int32(bitPattern: copy.pid)
                var a = Attachment(pid: pid, parentPID: Int32(bitPattern: copy.ppid), uid: copy.uid, hierarchy: copy.hierarchy,
                                   attachedNanoseconds: copy.attached_ns, program: program,
                                   isRunning: Self.isRunning(pid: pid, startTicks: copy.start_ticks), number: i)
                // Stored by the dying process after the record was written, outside its seqlock.
                let signal = aspects_load_acquire_u32(field(r, \.crash_signal))
                if signal != 0 && signal < 65 {
                    a.crashSignal = Int32(signal)
                    a.crashPID = Int32(bitPattern: r.pointee.crash_pid)
                }
                let caught = aspects_load_acquire_u32(field(r, \.crash_caught))
                if caught != 0 && caught < 65 {
                    a.crashCaught = Int32(caught)
                    a.crashPID = Int32(bitPattern: r.pointee.crash_pid)
                }
                a.stubFailures = aspects_load_acquire_u32(field(r, \.stub_failures))
                let first = aspects_load_acquire_u32(field(r, \.stub_failed_export))
                if a.stubFailures > 0 && first > 0 { a.firstStubFailure = Int(first - 1) }
                let applied = aspects_load_acquire_u64(field(r, \.protos_applied))
                if applied > 0 { a.protosApplied = applied - 1 }
                out.append(a)
            }
            i += 1
        }
        return out
    }

    /// What to say of processes that could not build a forwarding stub: rules on those
    /// functions advised nothing there, and only ASPECTS_DEBUG said so before.
    package func stubFailureNotes(_ attached: [Attachment]) -> [String] {
        attached.filter { $0.stubFailures > 0 }.map { a in
            let first = a.firstStubFailure.map { $0 < catalog.functions.count ? catalog.functions[$0].name : "a prototype rule's function" } ?? "a function"
            let others = a.stubFailures > 1 ? " and \(a.stubFailures - 1) other function(s)" : ""
            return "process \(a.pid) (\(a.program.isEmpty ? "?" : a.program)) could not build the forwarding stub of \(first)\(others): rules on them advised nothing there (libffi could not be loaded, or refused the signature; ASPECTS_DEBUG=1 says which)"
        }
    }

    /// Processes ever attached (may exceed what `attachments()` still holds).
    package var attachCount: UInt64 { aspects_load_acquire_u64(field(header, \.attach_head)) }

    /// Processes that found this table and refused it.
    package var attachFailures: AttachFailures {
        AttachFailures(count: aspects_load_acquire_u64(field(header, \.attach_failures)),
                       lastPID: Int32(bitPattern: header.pointee.last_failure_pid),
                       lastReason: AttachFailures.reason(header.pointee.last_failure_reason))
    }

    /// Whether `pid` is still the process that recorded `startTicks` (a zombie counts as gone).
    static func isRunning(pid: Int32, startTicks: UInt64) -> Bool {
        guard pid > 0 else { return false }
        let fd = Glibc.open("/proc/\(pid)/stat", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { Glibc.close(fd) }
        var bytes = [UInt8](repeating: 0, count: 1024)
        let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        guard n > 0, let close = bytes[..<n].lastIndex(of: UInt8(ascii: ")")) else { return false }
        let fields = bytes[(close + 1)..<n].split(separator: UInt8(ascii: " ")).map { String(decoding: $0, as: UTF8.self) }
        // fields[0] is the state (field 3); starttime is field 22.
        guard fields.count > 19, fields[0] != "Z", fields[0] != "X" else { return false }
        return startTicks == 0 || UInt64(fields[19]) == startTicks
    }
}
