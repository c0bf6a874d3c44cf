import Foundation

/// A program that stops on purpose when memory runs out — jq's "error: cannot allocate
/// memory" and abort() from its allocation wrapper, gnulib's xalloc_die ("memory exhausted"),
/// Rust's "memory allocation of N bytes failed" — is failing fast by design: outcome
/// `fail-fast`, shown once per program with its message, not a bug (`--fail-fast-is-bug`
/// makes such an abort a crash again). A SIGSEGV, an assertion or heap corruption after a
/// failed allocation is a bug whatever the message says.
package enum FailFast {
    /// What programs print when they give up for want of memory.
    static let messages: [OutputPhrase] = [
        "cannot allocate memory", "out of memory", "memory exhausted", "not enough memory",
        "memory allocation of # bytes failed", "insufficient memory",
    ]

    /// What glibc and the toolchains print when a program is broken, not out of memory.
    static let brokenProgram: [OutputPhrase] = [
        "assertion * failed", "corrupted", "double free", "free(): invalid", "stack smashing detected",
        "buffer overflow detected", "AddressSanitizer",
    ]

    /// The line of `stderr` saying memory ran out, nil when none does (or one says the
    /// program is broken).
    package static func message(in stderr: String) -> String? {
        let lines = stderr.split(separator: "\n")
        if lines.contains(where: { l in brokenProgram.contains { $0.occurs(in: l) } }) { return nil }
        return lines.last { l in messages.contains { $0.occurs(in: l) } }.map(String.init)
    }

    /// Whether stderr's last line says memory ran out: the last words of a program that
    /// stopped for it. One that said so and went on did not (m4 takes a regex it could not
    /// compile for want of memory for a bad one, and bison, later, gives up for what m4's
    /// output lacks: its own last line is another error).
    package static func lastWordsSayIt(_ stderr: String) -> Bool {
        guard let last = stderr.split(separator: "\n", omittingEmptySubsequences: true).last else { return false }
        return messages.contains { $0.occurs(in: last) }
    }

    /// Whether a run that failed an allocation (`errno` ENOMEM) with `point` ended fast on
    /// purpose: by abort (the command's SIGABRT, or every new crash of its tree a SIGABRT not
    /// through an assertion or heap check) after saying that memory ran out, or by an exit
    /// other than the baseline's right after saying it (`lastWordsSayIt`).
    package static func applies(_ record: RunRecord, point: FaultPoint, baseline: RunRecord) -> Bool {
        guard point.errno == "ENOMEM", point.kind != .short, !record.timedOut, message(in: record.stderr) != nil else { return false }
        let crashes = record.newCrashes(against: baseline)
        if record.crashSignal != nil || !crashes.isEmpty {
            return (record.crashSignal == nil || record.crashSignal == SIGABRT)
                && crashes.allSatisfy { $0.signal == SIGABRT && !CrashMachinery.reportsABrokenProgram($0.stack) }
        }
        return record.exitStatus != baseline.exitStatus && lastWordsSayIt(record.stderr)
    }

    /// `jq: error: cannot allocate memory (abort)`: what the report shows once per program.
    static func summary(_ r: ExploreResult, baseline: RunRecord) -> (program: String, message: String) {
        let crash = r.record.newCrashes(against: baseline).first
        let program = crash.map { FaultPoint.fileName($0.program) } ?? (r.point.imageName.isEmpty ? "the command" : r.point.imageName)
        let how = crash != nil || r.record.crashSignal != nil ? "abort" : "exit \(r.record.shellStatus)"
        return (program, BugCause.normalized(message(in: r.record.stderr) ?? "") + " (\(how))")
    }
}
