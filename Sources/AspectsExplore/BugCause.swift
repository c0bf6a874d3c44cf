import Foundation
import AspectsCore

/// What a finding is one bug by: the place a crash happened, or the symptom of a hang or a
/// failed check — never the fault that led there, so a bug reached from twenty fault points
/// (a NULL dereference behind every caller of a wrapper, sed's one regex bug behind twenty
/// allocations) is one bug with twenty points.
package enum BugCause {
    /// The most frames of a crash's place: the crashing frame and, while it is the C
    /// library's, the frames down to the first caller outside it.
    static let placeFrames = 4

    /// Where a crash happened: the innermost frame past the crash machinery (abort, raise,
    /// the assertion and heap-check reporters) and the preload, and — when that frame is in
    /// the C library (memset given NULL) — its callers down to the first outside it, whose
    /// bad argument it is. Never the callers above that: they are how the fault got there.
    package static func crashPlace(_ stack: [StackFrame]) -> [StackFrame] {
        var place: [StackFrame] = []
        for f in CrashMachinery.causalFrames(stack).prefix(placeFrames) {
            place.append(f)
            if !CrashMachinery.isCLibrary(f.object) { break }
        }
        return place
    }

    /// A frame as a crash's place names it: a C library frame by its function (where in
    /// memset it faults differs with the size it was given); else by function and line where
    /// there is debug information, else by the exact address, the function shown beside it.
    static func name(_ f: StackFrame) -> String {
        if CrashMachinery.isCLibrary(f.object), let symbol = f.symbol { return symbol }
        if let file = f.file, let line = f.line { return "\(f.symbol ?? f.site.description) (\(file):\(line))" }
        if let symbol = f.symbol { return "\(symbol) (\(f.site))" }
        return f.site.description
    }

    /// A crash's signature, `SIGSEGV in fill_record (explore_bugs.c:24)`, nil without a stack.
    package static func crashSignature(signal: Int32, stack: [StackFrame]) -> String? {
        let place = crashPlace(stack)
        guard !place.isEmpty else { return nil }
        return signalName(signal) + " in " + place.map(name).joined(separator: " ← ")
    }

    static func signalName(_ signal: Int32) -> String { ErrorNames.signalName(signal) ?? "signal \(signal)" }

    /// The symptom of a finding with no stack to tell it by (a hang, a failed check, a crash
    /// whose process left none): the image the fault was in, how the run ended, and the line
    /// of its stderr that says what went wrong (`SymptomLine`: a failed check's first line
    /// the baseline did not write, else its last) with what differs between runs of one bug
    /// made alike.
    package static func symptom(_ r: ExploreResult, crash: ProcessCrash?, baseline: RunRecord? = nil) -> String {
        let image = r.point.imageName.isEmpty ? FaultPoint.fileName(crash?.program ?? "") : r.point.imageName
        let end: String
        switch r.outcome {
        case .hang: end = "still running after the timeout"
        case .crash: end = signalName(crash?.signal ?? r.record.crashSignal ?? 0) + (crash.map { " in " + FaultPoint.fileName($0.program) } ?? "")
        case .checkFailed: end = "exit \(r.record.shellStatus); the check failed"
        case .silentDifference:
            // A run that said nothing is known by what became of its files (sed's file
            // emptied and its file left unsubstituted are two bugs). One that reported trouble
            // on stderr and still exited as if all went well is known by that: which files it
            // left wrong follows from where the trouble came (bison after m4 failed: calc.c,
            // calc.h or both), the status that hides it is the bug.
            if BaselineFiles.said(r.record.differingFiles) {
                end = "exit \(r.record.shellStatus) as the baseline, though it wrote to stderr; its files differ"
            } else {
                end = "exit \(r.record.shellStatus) as the baseline, nothing said; differs: " + r.record.differingFiles.map(normalized).joined(separator: ", ")
            }
        default: end = "exit \(r.record.shellStatus)"
        }
        // (what a silent difference said on its way is not its cause: the files are)
        let last = r.outcome == .silentDifference ? "" : SymptomLine.of(r, baseline: baseline)
        return (image.isEmpty ? "" : image + ": ") + end + (last.isEmpty ? "" : "; stderr: \"\(last)\"")
    }

    /// The run's own directories (`…/work/run-00012/…`, `again-12`), hex addresses and
    /// numbers, each made one token: what two runs of one bug print differently.
    package static func normalized(_ line: String) -> String { RunTextNormalizer.normalized(line) }
}
