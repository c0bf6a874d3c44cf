import Foundation
import AspectsCore

/// What a run left in its working directory: each entry's path (relative), and for a regular
/// file its size and digest (`OutputDigest`), for a link its target. explore compares a run's
/// with the baseline's to find what a run that exited as the baseline did, saying nothing,
/// wrote otherwise — silent data loss, found without a `--check` (`silent-difference`).
package struct WorkingFiles: Sendable, Equatable {
    /// relative path → what is there: `file SIZE DIGEST`, `link TARGET`, `directory`, `other`
    package var entries: [String: String] = [:]

    package init(entries: [String: String] = [:]) { self.entries = entries }

    /// The directory's entries, all of them (hidden ones too), read without following links.
    package static func snapshot(_ directory: String) -> WorkingFiles {
        var out = WorkingFiles()
        guard let walk = FileManager.default.enumerator(atPath: directory) else { return out }
        while let relative = walk.nextObject() as? String {
            let path = directory + "/" + relative
            var st = stat()
            guard lstat(path, &st) == 0 else { out.entries[relative] = "gone"; continue }
            switch st.st_mode & S_IFMT {
            case S_IFREG: out.entries[relative] = "file \(st.st_size) " + (digest(path) ?? "unreadable")
            case S_IFLNK: out.entries[relative] = "link " + ((try? FileManager.default.destinationOfSymbolicLink(atPath: path)) ?? "?")
            case S_IFDIR: out.entries[relative] = "directory"
            default: out.entries[relative] = "other"
            }
        }
        return out
    }

    /// A file's digest, read in blocks.
    static func digest(_ path: String) -> String? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        var d = OutputDigest()
        while let block = try? handle.read(upToCount: 1 << 20), !block.isEmpty {
            block.withUnsafeBytes { d.add($0) }
        }
        return d.hex
    }

    /// The paths whose entry differs from `other`'s, or that one of the two lacks; sorted.
    package func differences(from other: WorkingFiles) -> [String] {
        Set(entries.keys).union(other.entries.keys).filter { entries[$0] != other.entries[$0] }.sorted()
    }

    /// What became of `path` here against `other`: `removed`, `created`, `emptied` or
    /// `changed` — two bugs that both touch one file (sed's: a regex that ran out of memory
    /// leaves f.txt unsubstituted, a failed read buffer empties it) end it differently.
    package func change(of path: String, from other: WorkingFiles) -> String {
        guard let mine = entries[path] else { return "removed" }
        guard other.entries[path] != nil else { return "created" }
        return mine.hasPrefix("file 0 ") ? "emptied" : "changed"
    }

    /// A difference as runs carry it (`RunRecord.differingFiles`): `f.txt (emptied)`.
    static func entry(_ path: String, _ change: String) -> String { "\(path) (\(change))" }

    /// The path of such an entry.
    package static func path(ofEntry entry: String) -> String {
        guard entry.hasSuffix(")"), let open = entry.range(of: " (", options: .backwards) else { return entry }
        return String(entry[..<open.lowerBound])
    }
}

/// What the baseline runs left, and which of it differed between them: a run is compared
/// with the first baseline on the rest only (a timestamp, a pid in a file name).
package struct BaselineFiles: Sendable {
    package var first: WorkingFiles
    /// Paths that differed between baseline runs (never a run's difference).
    package var unstable: Set<String> = []
    /// The baselines' stdout differed: a run's stdout tells nothing.
    package var stdoutUnstable = false

    package init(first: WorkingFiles) { self.first = first }

    /// How a run that exited as the baseline did, with the same stderr, differs from it: the
    /// files, and `(stdout)` when its stdout lost the baseline's end (`stdoutLost`); empty
    /// when it does not.
    package func silentDifferences(_ files: WorkingFiles, stdoutLost: Bool) -> [String] {
        files.differences(from: first).filter { !unstable.contains($0) }.map { WorkingFiles.entry($0, files.change(of: $0, from: first)) }
            + (stdoutLost && !stdoutUnstable ? [Self.stdoutName] : [])
    }

    /// Whether `run`'s stdout lost lines of `baseline`'s: shorter, its lines the baseline's in
    /// order with some left out (a record not written, an end cut off). Another stdout is not
    /// counted — a program may say on stdout what it did instead ("careful: NULL"), or print
    /// otherwise on a fallback (another locale) — but lines gone are data lost whatever the
    /// program meant. Read from the runs' files (`RunRecord.stdoutPath`), whole ones only.
    static func stdoutLost(_ run: RunRecord, against baseline: RunRecord) -> Bool {
        guard run.stdoutBytes < baseline.stdoutBytes, !run.truncatedStreams.contains("stdout"), !baseline.truncatedStreams.contains("stdout"),
              let mine = FileManager.default.contents(atPath: run.stdoutPath),
              let theirs = FileManager.default.contents(atPath: baseline.stdoutPath) else { return false }
        var lines = theirs.split(separator: 0x0A, omittingEmptySubsequences: false).makeIterator()
        for line in mine.split(separator: 0x0A, omittingEmptySubsequences: false) {
            while true {
                guard let next = lines.next() else { return false }
                if next == line { break }
            }
        }
        return true
    }

    /// How the run's standard output is named among its differences.
    package static let stdoutName = "(stdout)"
    /// Said among the differences of a run that wrote something other than the baseline's to
    /// stderr (and still exited as the baseline did): not a difference of its own, but what
    /// the run said on its way to the files that differ.
    package static let stderrName = "(stderr)"

    /// Whether a run's differences include what it said on stderr.
    package static func said(_ differences: [String]) -> Bool { differences.first == stderrName }
}

extension ExploreCampaign {
    /// How run `name` (ended as the baseline did, with its stderr) differs from what a run
    /// with no fault leaves: what differs from the first baseline (`BaselineFiles`) and also
    /// from a run with no fault made right after this one. A file holding the time (gzip's
    /// header) is the same in two baselines of one second and differs a second later: the
    /// run next to it tells that apart. Empty: no silent difference.
    func silentDifferences(_ record: RunRecord, in dir: String, name: String, baseline: RunRecord, timeout: Double) throws(AspectsError) -> [String] {
        guard let files = baselineFiles else { return [] }
        let run = WorkingFiles.snapshot(dir)
        let first = files.silentDifferences(run, stdoutLost: BaselineFiles.stdoutLost(record, against: baseline))
        guard !first.isEmpty else { return [] }
        let (paired, _, pairedDir) = try runOnce(name + "-paired", rules: "[]", timeout: timeout)
        defer { removeWork(name + "-paired") }
        // a run with no fault that ends otherwise: nothing here can be told from a fault
        guard !paired.timedOut, paired.signal == nil, paired.exitStatus == baseline.exitStatus, paired.sameStderr(as: baseline) else { return [] }
        let differing = Set(run.differences(from: WorkingFiles.snapshot(pairedDir)))
        return first.filter { $0 == BaselineFiles.stdoutName ? BaselineFiles.stdoutLost(record, against: paired) : differing.contains(WorkingFiles.path(ofEntry: $0)) }
    }
}
