#if canImport(Glibc)
import Glibc
#endif
import CAspectsABI
import AspectsCore
import AspectsRules

/// The advice table in shared memory: created, written and read by aspectctl and the Swift
/// API, read without locks by libaspects.so in every advised process.
///
/// Writers hold `flock(LOCK_EX)` for every change and validate everything before the first
/// store, so a failed `add` leaves the table as it was. A writer that dies mid-update leaves
/// `writer_pid` set; the next writer sees it under the lock and repairs the table
/// (docs/ARCHITECTURE.md §3).
package final class AdviceTable {
    package let name: TableName
    package let catalog: Catalog
    /// The anchor file (writers flock it); -1 while a new table is still being made.
    var fd: Int32
    /// The attached segment (aspects_abi.h: where a table lives) and its fixed size.
    package let base: UnsafeMutableRawPointer
    package let size: Int
    /// The batch being written (under the lock), and the slots it adds and removes.
    var batch: UInt64 = 0
    var batchAdded: [Int] = []
    var batchRemoved: [Int] = []

    /// The geometry as validated when the table was opened (or made). Every address is
    /// computed from this copy, never from the header again: any attached process can write
    /// the header, and a long-running reader (`events --follow`, explore) must not follow a
    /// rewritten offset out of the segment.
    struct Geometry {
        var groups = 0, rules = 0, events = 0, stats = 0
        var armed = 0, lists = 0, slots = 0, ring = 0, statistics = 0, protos = 0, sources = 0
    }
    var geometry = Geometry()

    package var header: UnsafeMutablePointer<aspects_table_header> { aspects_header(base) }

    init(name: TableName, catalog: Catalog, fd: Int32, base: UnsafeMutableRawPointer, size: Int) {
        self.name = name
        self.catalog = catalog
        self.fd = fd
        self.base = base
        self.size = size
    }

    deinit {
        aspects_segment_detach(base)
        if fd >= 0 { System.close(fd) }
    }

    package var ruleCapacity: Int { geometry.rules }
    /// The running processes the last addRules waited for in vain (awaitLivePrototypes).
    package internal(set) var lateLivePrototypes: [Attachment] = []
    /// Made with --live-prototypes: each attached process keeps a thread that applies prototype
    /// rules as they come (without it, at the process's next advised call).
    package var livePrototypes: Bool { header.pointee.options & ASPECTS_TABLE_LIVE_PROTOTYPES != 0 }
    package var eventCapacity: Int { geometry.events }
    var groupCapacity: Int { geometry.groups }
    var statCapacity: Int { geometry.stats }
}

extension AdviceTable {
    /// A new process hierarchy of this table, as the ASPECTS_HIERARCHY value that makes a
    /// process and its descendants one hierarchy (identity.c reads it).
    package func newHierarchy() -> String {
        // A word any attached process can write: it wraps (skipping 0, "no hierarchy"), never traps.
        var id = aspects_fetch_add_u64(field(header, \aspects_table_header.next_hierarchy), 1) &+ 1
        if id == 0 { id = aspects_fetch_add_u64(field(header, \aspects_table_header.next_hierarchy), 1) &+ 1 }
        return "\(header.pointee.created_ns):\(id)"
    }
}
