#if canImport(Glibc)
import Glibc
#endif
import Foundation
import AspectsCore
import AspectsTable

/// A campaign's journal, OUT/journal.jsonl: a header line (the plan's id and size, and the
/// options that made it), then one line per finished run as the report's `runs` give it
/// (`ReportCoding`), each written with one write, so that after an interruption (SIGINT, a CI
/// timeout, a lost node) `explore --resume` runs only what is missing. A written line outlives
/// the process whatever kills it; against the machine's own crash the journal is synced at
/// most `syncInterval` after a line (an fsync is milliseconds, as long as a short run, and a
/// line lost with the machine only means its run is made again). A line cut short by a kill
/// is the last one, without its newline: it is ignored (and said), and cut off before the
/// journal is appended to again.
package final class CampaignJournal: @unchecked Sendable {
    package static let fileName = "journal.jsonl"
    private let fd: Int32
    private let lock = NSLock()
    package let path: String
    private var lastSync = Date.distantPast
    private var unsynced = false
    static let syncInterval = 1.0

    private init(fd: Int32, path: String) {
        self.fd = fd
        self.path = path
    }

    deinit {
        if unsynced { _ = fsync(fd) }
        _ = Glibc.close(fd)
    }

    /// What the header says of the plan; `settings` are the options that chose it, by name
    /// (`--seed` → `7`), to say what changed when a resumed plan is not the journal's.
    package struct Header: Sendable, Equatable {
        package var planID: String
        package var points: Int
        package var settings: [String: String]

        package init(planID: String, points: Int, settings: [String: String]) {
            (self.planID, self.points, self.settings) = (planID, points, settings)
        }

        var json: JSONNode.Value {
            JSONOut.object([("journal", JSONOut.int(1)), ("planId", .string(planID)), ("points", JSONOut.int(points)),
                            ("settings", JSONOut.object(settings.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) }))])
        }
    }

    /// A journal read back: its header, its runs, and what was ignored.
    package struct Contents: Sendable {
        package var header: Header
        package var results: [ExploreResult]
        /// Said to the user: a last line cut short by a kill.
        package var notes: [String]
        /// Where the complete lines end (the file is cut there before appending).
        var end: Int
    }

    static func path(in directory: String) -> String { directory + "/" + fileName }

    /// A new journal in `directory` starting with `header`.
    package static func create(in directory: String, header: Header) throws(AspectsError) -> CampaignJournal {
        let p = path(in: directory)
        let fd = try OutputFile.open(p, option: "--out", mode: 0o644)
        let journal = CampaignJournal(fd: fd, path: p)
        try journal.write(header.json.rendered() + "\n")
        return journal
    }

    /// The journal of `contents`, appended to after its last complete line.
    package static func reopen(in directory: String, after contents: Contents) throws(AspectsError) -> CampaignJournal {
        let p = path(in: directory)
        let fd = Glibc.open(p, O_WRONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw AspectsError(.system, field: "--out", "cannot open \(p): \(String(cString: strerror(errno)))") }
        guard ftruncate(fd, off_t(contents.end)) == 0, lseek(fd, 0, SEEK_END) >= 0 else {
            let e = errno
            _ = Glibc.close(fd)
            throw AspectsError(.system, field: "--out", "cannot cut \(p) after its last complete line: \(String(cString: strerror(e)))")
        }
        return CampaignJournal(fd: fd, path: p)
    }

    /// Appends one finished run.
    package func append(_ r: ExploreResult) throws(AspectsError) {
        try write(ExploreReport.runJSON(r, reproduce: nil, location: nil).rendered() + "\n")
    }

    private func write(_ line: String) throws(AspectsError) {
        let bytes = Array(line.utf8)
        let failed: Int32? = lock.withLock {
            if let e = OutputFile.writeAll(fd, bytes) { return e }
            guard Date().timeIntervalSince(lastSync) >= Self.syncInterval else { unsynced = true; return nil }
            (lastSync, unsynced) = (Date(), false)
            return fsync(fd) == 0 ? nil : errno
        }
        if let failed { throw AspectsError(.system, field: "--out", "cannot write the journal \(path): \(String(cString: strerror(failed)))") }
    }

    /// Reads the journal in `directory`; nil when there is none.
    package static func read(in directory: String) throws(AspectsError) -> Contents? {
        let p = path(in: directory)
        guard let data = FileManager.default.contents(atPath: p) else { return nil }
        let bytes = [UInt8](data)
        let reader = ReportReader(source: p)
        var lines: [(text: String, number: Int)] = []
        var start = 0, number = 0, notes: [String] = []
        while start < bytes.count {
            number += 1
            guard let nl = bytes[start...].firstIndex(of: 0x0A) else {
                notes.append("\(p): line \(number) was cut short (the campaign was killed while writing it): ignored, its run is made again")
                break
            }
            lines.append((String(decoding: bytes[start..<nl], as: UTF8.self), number))
            start = nl + 1
        }
        let end = notes.isEmpty ? bytes.count : start
        guard let first = lines.first else {
            throw AspectsError(.invalidValue, field: "--resume", location: p, "the journal has no header line",
                               fix: "start the campaign again without --resume (with --force to clear \(directory))")
        }
        func parse(_ line: (text: String, number: Int)) throws(AspectsError) -> JSONNode {
            do { return try JSONParser.parse(line.text) } catch {
                throw AspectsError(.malformedJSON, field: "--resume", location: "\(p):\(line.number)", "not a journal line (\(error))",
                                   fix: "the journal is only written by explore; start again with --force")
            }
        }
        let h = try parse(first)
        var settings: [String: String] = [:]
        if case .object(let members)? = h["settings"]?.value {
            for m in members { settings[m.key] = try reader.value(m.value, "settings." + m.key) }
        }
        let header = Header(planID: try reader.string(h, "planId", "header"), points: try reader.int(h, "points", "header"), settings: settings)
        var byIndex: [Int: ExploreResult] = [:]
        for line in lines.dropFirst() {
            let r = try ExploreReport.result(json: try parse(line), reader, at: "line \(line.number)")
            byIndex[r.index] = r
        }
        return Contents(header: header, results: byIndex.keys.sorted().map { byIndex[$0]! }, notes: notes, end: end)
    }

    /// Why a journal cannot be resumed with `now` (the header of the plan made now): nil when
    /// it can. Every setting counts, not only those that choose the points: runs judged with
    /// another --check, --setup or --timeout, or of another shard, do not belong in one report.
    package static func mismatch(journal: Header, now: Header) -> String? {
        let changed = Set(journal.settings.keys).union(now.settings.keys).sorted().filter { journal.settings[$0] != now.settings[$0] }
        guard journal.planID != now.planID || journal.points != now.points || !changed.isEmpty else { return nil }
        if changed.isEmpty {
            return "the plan changed since the journal was written: it was plan \(journal.planID) of \(journal.points) point(s), now \(now.planID) of \(now.points); "
                + "the options are the same, so the program's calls in the baseline changed"
        }
        return "the campaign changed since the journal was written (plan \(journal.planID) of \(journal.points) point(s), now \(now.planID) of \(now.points)): "
            + changed.map { "\($0) was \(journal.settings[$0].map { $0.isEmpty ? "not given" : $0 } ?? "not given"), now \(now.settings[$0].map { $0.isEmpty ? "not given" : $0 } ?? "not given")" }.joined(separator: ", ")
    }

    // MARK: - what a campaign left in OUT

    /// Readies `directory` (--out) for a campaign: with `resume`, reads its journal; else
    /// refuses a directory holding a previous campaign's results, or with `force` clears them
    /// first. A campaign interrupted before its plan was made left no journal: resuming it is
    /// starting it (nil), unless reproducers of another campaign are there.
    package static func prepare(_ directory: String, resume: Bool, force: Bool) throws(AspectsError) -> Contents? {
        if resume, let contents = try read(in: directory) { return contents }
        guard holdsCampaign(directory) else { return nil }
        guard force else {
            if resume {
                throw AspectsError(.invalidValue, field: "--resume", "\(directory) holds reproducers but no journal (\(fileName)): not a campaign --resume can finish",
                                   fix: "give --force instead to clear them and start again, or another --out")
            }
            let found = campaignEntries(in: directory).filter { $0 != "work" }
            let named = found.prefix(3).joined(separator: ", ") + (found.count > 3 ? " and \(found.count - 3) more" : "")
            throw AspectsError(.invalidValue, field: "--out", "\(directory) holds a previous campaign's results (\(named))",
                               fix: "add --resume to finish that campaign, --force to clear what it wrote there, or give another --out")
        }
        try clear(directory)
        return nil
    }

    /// The entries of `directory` a campaign writes: the journal, reproducers (`repro-N.json`,
    /// `repro-N.sh`) and `work`. Nothing else there is a campaign's.
    package static func campaignEntries(in directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter(isCampaignEntry).sorted()
    }

    static func isCampaignEntry(_ name: String) -> Bool {
        if name == fileName || name == "work" { return true }
        guard name.hasPrefix("repro-"), name.hasSuffix(".json") || name.hasSuffix(".sh") else { return false }
        let number = name.dropFirst("repro-".count).prefix { $0 != "." }
        return !number.isEmpty && number.allSatisfy(\.isNumber)
    }

    /// Whether `directory` holds a previous campaign's results (its journal or reproducers).
    package static func holdsCampaign(_ directory: String) -> Bool {
        campaignEntries(in: directory).contains { $0 != "work" }
    }

    /// Removes what a campaign wrote in `directory` (`campaignEntries`), nothing else. A
    /// symbolic link among them is removed as a link: nothing outside is reached.
    package static func clear(_ directory: String) throws(AspectsError) {
        for name in campaignEntries(in: directory) {
            let p = directory + "/" + name
            var st = stat()
            guard lstat(p, &st) == 0 else { continue }
            let removed = (st.st_mode & S_IFMT) == S_IFDIR ? removeTree(p) : unlink(p) == 0
            if !removed {
                throw AspectsError(.system, field: "--force", "cannot remove \(p): \(String(cString: strerror(errno)))",
                                   fix: "remove it yourself, or give another --out")
            }
        }
    }

    /// Removes a directory tree without following a symbolic link in it. A run's table a
    /// killed campaign left there is destroyed, not only unlinked: its segment outlives the
    /// file (AdviceTable.destroy removes it only while it is this table's and ours).
    static func removeTree(_ dir: String) -> Bool {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? [] {
            let p = dir + "/" + name
            var st = stat()
            guard lstat(p, &st) == 0 else { continue }
            if (st.st_mode & S_IFMT) == S_IFREG, name.hasSuffix(".table"), let table = try? TableName(p) {
                try? AdviceTable.destroy(table)
                if lstat(p, &st) != 0 { continue }
            }
            if (st.st_mode & S_IFMT) == S_IFDIR ? !removeTree(p) : unlink(p) != 0 { return false }
        }
        return rmdir(dir) == 0
    }
}
