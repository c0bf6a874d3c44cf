import CAspectsABI
import AspectsTable

/// A program image of a process tree: one executable, with how many processes ran it and when
/// the first of them started (the images' exec order).
package struct ProgramImage: Sendable, Equatable {
    /// The executable's path as the preload read it (/proc/self/exe, links resolved); a path
    /// longer than an attachment record holds has its start cut off (`mayBeCut`) unless it is
    /// a program the campaign knows; "" for calls of processes no record names.
    package var path: String
    /// Processes that ran it: exec'd images and fork children that did not exec.
    package var processes: Int
    /// CLOCK_REALTIME when its first process attached the table.
    package var firstAttachedNanoseconds: UInt64

    package init(path: String, processes: Int, firstAttachedNanoseconds: UInt64) {
        self.path = path
        self.processes = processes
        self.firstAttachedNanoseconds = firstAttachedNanoseconds
    }

    /// The longest path an attachment record holds; a longer one keeps its end only.
    static let recordedPathLimit = MemoryLayout.size(ofValue: aspects_attachment().program) - 1

    /// Whether a recorded path may be the end of a longer one: it does not start with '/', or
    /// it fills the record (then it may have been cut just before a '/').
    static func mayBeCut(_ path: String) -> Bool {
        !path.isEmpty && (!path.hasPrefix("/") || path.utf8.count >= recordedPathLimit)
    }

    /// `path`, or the one of `known` (full paths) it is the cut end of.
    static func completed(_ path: String, known: [String]) -> String {
        guard mayBeCut(path) else { return path }
        return known.first { $0.hasSuffix(path) && $0.utf8.count > path.utf8.count } ?? path
    }
}

extension Attachment {
    /// The attachment record of a process image: the one its statistics entry names (a fork
    /// child names its parent's, which ran the same program), else the latest of its pid.
    package static func record(ofPID pid: Int32, image: UInt64, in attached: [Attachment]) -> Attachment? {
        attached.first { image > 0 && $0.number + 1 == image } ?? attached.last { $0.pid == pid }
    }
}

/// Which program image a process ran, told from a table's attachment records (pid, start time,
/// program) and its statistics entries (pid → the image number each process counted under: a
/// fork child that did not exec has no record of its own and counts under its parent's). An
/// event names only its pid and time: its image is the latest of that pid's images that
/// attached at or before it, so an exec'd image of the same pid, and a later process that got
/// a reused pid, are told apart.
package struct ImageResolver {
    /// attachment number → record
    private let records: [UInt64: Attachment]
    /// pid → the attachment numbers of its images
    private let imagesOfPID: [Int32: Set<UInt64>]
    /// pid → its images' (attach time, program), oldest first: what events are looked up in
    private let timeline: [Int32: [(attached: UInt64, program: String)]]

    /// - known: full paths of programs the tree may run (the command's own): a record's path
    ///   cut at its start is taken to be the one of them it ends.
    package init(attachments: [Attachment], statistics: [(pid: Int32, image: UInt64)], known: [String] = []) {
        let byNumber = Dictionary(attachments.map { a in
            var a = a
            a.program = ProgramImage.completed(a.program, known: known)
            return (a.number, a)
        }, uniquingKeysWith: { a, _ in a })
        var of: [Int32: Set<UInt64>] = [:]
        for a in attachments { of[a.pid, default: []].insert(a.number) }
        for s in statistics where s.image > 0 && byNumber[s.image - 1] != nil { of[s.pid, default: []].insert(s.image - 1) }
        records = byNumber
        imagesOfPID = of
        timeline = of.mapValues { numbers in
            numbers.compactMap { byNumber[$0] }.sorted { ($0.attachedNanoseconds, $0.number) < ($1.attachedNanoseconds, $1.number) }
                .map { ($0.attachedNanoseconds, $0.program) }
        }
    }

    package init(_ table: AdviceTable, rules: [TableRule], known: [String] = []) {
        self.init(attachments: table.attachments(), statistics: rules.flatMap { $0.byProcess.map { ($0.pid, $0.image) } }, known: known)
    }

    /// The program of a statistics entry (pid, image number); "" when no record names it.
    package func program(ofPID pid: Int32, image: UInt64) -> String {
        if image > 0, let a = records[image - 1] { return a.program }
        return program(ofPID: pid, at: UInt64.max)
    }

    /// The program process `pid` ran at `time` (CLOCK_REALTIME); "" when no record names it.
    package func program(ofPID pid: Int32, at time: UInt64) -> String {
        timeline[pid]?.last { $0.attached <= time }?.program ?? ""
    }

    /// Every image of the tree in exec order, with its processes (pids, fork children included).
    package var images: [ProgramImage] {
        var first: [String: UInt64] = [:], pids: [String: Set<Int32>] = [:]
        for a in records.values {
            first[a.program] = min(first[a.program] ?? .max, a.attachedNanoseconds)
            pids[a.program, default: []].insert(a.pid)
        }
        for (pid, numbers) in imagesOfPID { for n in numbers { if let a = records[n] { pids[a.program, default: []].insert(pid) } } }
        return first.map { ProgramImage(path: $0.key, processes: pids[$0.key]?.count ?? 0, firstAttachedNanoseconds: $0.value) }
            .sorted { ($0.firstAttachedNanoseconds, $0.path) < ($1.firstAttachedNanoseconds, $1.path) }
    }
}
