#if canImport(Glibc)
import Glibc
#endif
import Foundation
import CAspectsABI
import AspectsCore

/// The caller's tables in /dev/shm (`aspectctl tables`, `aspectctl gc`): what each holds, who
/// uses it, and whether anything still could. Tables given by file path live wherever their
/// owner put them and are not listed.
package struct TableInventory: Sendable {
    package struct Entry: Sendable {
        package var name: TableName
        package var bytes: UInt64
        /// Active rules; nil when the table cannot be read (then `problem` says why).
        package var activeRules: Int?
        package var attached: UInt64 = 0
        /// Attached processes still running.
        package var running: Int = 0
        /// The latest of the file's modification and the latest attachment, seconds since 1970.
        package var lastUse: Double
        package var problem: String?
        /// `run`'s private tables are named run-PID-…: the pid of the run that made it.
        package var runPID: Int32?
        /// A `run`'s private table whose run and attached processes are all gone.
        package var isLeftOver: Bool {
            guard let pid = runPID else { return false }
            return !Self.alive(pid) && running == 0
        }

        static func alive(_ pid: Int32) -> Bool { kill(pid, 0) == 0 || errno == EPERM }
    }

    package var entries: [Entry]

    /// Every table file in `directory` (default /dev/shm) that the effective user owns.
    package static func scan(directory: String = "/dev/shm") -> TableInventory {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        var entries: [Entry] = []
        for file in names.sorted() where file.hasPrefix("aspects.") {
            let short = String(file.dropFirst("aspects.".count))
            guard directory == "/dev/shm", let name = try? TableName(short) else { continue }
            var st = stat()
            guard lstat(directory + "/" + file, &st) == 0, st.st_mode & S_IFMT == S_IFREG, st.st_uid == geteuid() else { continue }
            var e = Entry(name: name, bytes: UInt64(st.st_size),
                          lastUse: Double(st.st_mtim.tv_sec) + Double(st.st_mtim.tv_nsec) / 1e9)
            if short.hasPrefix("run-"), let pid = short.split(separator: "-").dropFirst().first.flatMap({ Int32($0) }) { e.runPID = pid }
            do {
                let t = try AdviceTable.open(name)
                e.bytes = UInt64(t.size) // the segment's; the file is its anchor
                e.activeRules = t.rules().count
                e.attached = t.attachCount
                let a = t.attachments()
                e.running = a.filter(\.isRunning).count
                if let latest = a.map(\.attachedNanoseconds).max() { e.lastUse = max(e.lastUse, Double(latest) / 1e9) }
            } catch {
                e.problem = error.message
            }
            entries.append(e)
        }
        return TableInventory(entries: entries)
    }
}

/// Segments a killed `create` left: made by the caller, with a table's magic (or the mark of
/// one not filled yet, stored the moment the segment is attached), never anchored
/// (aspects_table_header.anchored: set just before the anchor gets its name), no process
/// attached and their creator gone. No name leads to them, so only `gc` finds them
/// (docs/ARCHITECTURE.md §3, storage).
package struct LeftoverSegment: Sendable {
    package var shmid: Int32
    package var bytes: UInt64
    package var creatorPID: Int32

    /// The caller's leftovers, from the kernel's list of segments.
    package static func scan() -> [LeftoverSegment] {
        SystemVSegments.callers()
            .filter { $0.nattch == 0 && !TableInventory.Entry.alive($0.cpid) && isUnanchoredTable($0.shmid) }
            .map { LeftoverSegment(shmid: $0.shmid, bytes: $0.size, creatorPID: $0.cpid) }
    }

    /// Whether the segment holds a table header whose anchor was never named.
    static func isUnanchoredTable(_ shmid: Int32) -> Bool {
        SegmentList.tableHeader(of: shmid)?.anchored == 0
    }

    /// Removes it, if it is still a leftover.
    package func remove() throws(AspectsError) {
        guard Self.isUnanchoredTable(shmid) else { return }
        guard aspects_segment_remove(shmid) == 0 else { throw System.failure("remove the shared memory segment", "\(shmid)", errno) }
    }
}
