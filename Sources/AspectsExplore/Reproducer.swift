import Foundation

/// A finding's reproducer as a shell script to paste into a bug report (`repro-N.sh` next to
/// `repro-N.json`): it makes a fresh directory, runs the setup, runs the command under the
/// finding's rule with the aspectctl that found it (within the campaign's timeout), runs the
/// check with the variables explore gave it, and exits 0 exactly when the finding's outcome
/// happens again — the same crash signal of the command, or a crash of the same program
/// anywhere in its process tree (the crash recorder's files, as explore reads them); a hang
/// still running after the longer limit explore confirmed it with; the check failing — and 1
/// otherwise.
package enum Reproducer {
    /// The script's path for a reproducer rules file: `repro-00003.json` → `repro-00003.sh`.
    package static func scriptPath(forRules rules: String) -> String {
        (rules.hasSuffix(".json") ? String(rules.dropLast(5)) : rules) + ".sh"
    }

    /// The script for finding `r` of `report`, its rule from `r.reproducerPoint`.
    package static func script(for r: ExploreResult, in report: ExploreReport, aspectctl: String, check: String?) -> String {
        let q = ExploreReport.shellQuoted
        let point = r.reproducerPoint ?? r.point
        var s = "#!/bin/sh\n"
        s += "# Reproduces a finding of aspectctl explore on: \(report.command.joined(separator: " "))\n"
        s += "#   \(r.outcome.rawValue.uppercased()) \(report.describe(r.point)): \(ExploreReport.what(r, baseline: report.baseline))\n"
        if point != r.point { s += "#   the fault here: \(report.describe(point))\n" }
        s += "# Exits 0 when it happens again (\(expectation(r, report: report))), 1 when it does not.\n"
        s += "top=$(mktemp -d \"${TMPDIR:-/tmp}/aspects-repro.XXXXXX\") || exit 1\n"
        s += "mkdir \"$top/work\" && cd \"$top/work\" || exit 1\n"
        s += "cat > \"$top/rules.json\" <<'ASPECTS_RULES'\n[\(point.ruleJSON)]\nASPECTS_RULES\n"
        if let setup = report.setup {
            s += "sh -c \(q(setup)) || { echo \"repro: the setup failed in $top/work\" >&2; exit 1; }\n"
        }
        // As explore ran it: every symbol bound at start, crashes recorded in the tree (each
        // crashing process leaves its stack and mappings in the crash directory).
        s += "mkdir \"$top/crash\" || exit 1\n"
        s += "export LD_BIND_NOW=1 ASPECTS_RECORD_CRASH=1 ASPECTS_CRASH_DIR=\"$top/crash\"\n"
        // a hang is one only still running after the longer limit (RunTimeouts)
        let limit = r.outcome == .hang ? RunTimeouts.confirmation(report.timeout) : report.timeout
        let timeout = String(format: "%.0f", max(1, limit.rounded(.up)))
        s += "timeout -k 5 \(timeout) \(q(aspectctl)) run --rules \"$top/rules.json\" --report-file \"$top/aspectctl-report\" -- "
            + report.command.map(q).joined(separator: " ") + " > \"$top/stdout\" 2> \"$top/stderr\" < /dev/null\n"
        s += "status=$?\n"
        if r.outcome == .silentDifference { s += baselineRun(report: report, timeout: timeout) }
        s += verdict(r, report: report, check: check)
        return s
    }

    /// What reproducing means, as the script's comment says it.
    static func expectation(_ r: ExploreResult, report: ExploreReport) -> String {
        switch r.outcome {
        case .crash:
            if let c = r.record.newCrashes(against: report.baseline).first, c.caughtByHandler {
                return "signal \(c.signal) in \(FaultPoint.fileName(c.program)), \(ProcessCrash.caughtLabel)"
            }
            return "killed by signal \(crashSignal(r, report: report))"
        case .hang: return "still running after \(ExploreReport.seconds(RunTimeouts.confirmation(report.timeout)))"
        case .silentDifference:
            let files = r.record.differingFiles.filter { $0 != BaselineFiles.stderrName }.joined(separator: ", ")
            return "the same status" + (BaselineFiles.said(r.record.differingFiles) ? "" : " and stderr") + " as a run with no fault, but \(files) differing"
        default: return "the check fails"
        }
    }

    /// The signal of a crash finding: the first new crash in the tree, else the command's own.
    static func crashSignal(_ r: ExploreResult, report: ExploreReport) -> Int32 {
        r.record.newCrashes(against: report.baseline).first?.signal ?? r.record.crashSignal ?? 0
    }

    /// The crash of a finding in a process below the command, or one a handler caught (the
    /// command's own status shows no signal, or another): nil when the command itself died by it.
    static func childCrash(_ r: ExploreResult, report: ExploreReport) -> ProcessCrash? {
        guard let c = r.record.newCrashes(against: report.baseline).first, r.record.signal != c.signal else { return nil }
        return c
    }

    /// A silent difference is one against a run with no fault: the command once more, as it
    /// is, in a directory of its own prepared the same way.
    static func baselineRun(report: ExploreReport, timeout: String) -> String {
        let q = ExploreReport.shellQuoted
        var s = "# the same command with no fault, to compare with\n"
        s += "mkdir \"$top/base\" && cd \"$top/base\" || exit 1\n"
        if let setup = report.setup { s += "sh -c \(q(setup)) || { echo \"repro: the setup failed in $top/base\" >&2; exit 1; }\n" }
        s += "timeout -k 5 \(timeout) " + report.command.map(q).joined(separator: " ") + " > \"$top/base.stdout\" 2> \"$top/base.stderr\" < /dev/null\n"
        s += "base=$?\ncd \"$top\" || exit 1\n"
        return s
    }

    /// The script's end: the test of the outcome, a line saying which, the exit status.
    static func verdict(_ r: ExploreResult, report: ExploreReport, check: String?) -> String {
        let yes = "echo \"repro: reproduced (status $status; output in $top)\" >&2; exit 0"
        let no = "echo \"repro: not reproduced (status $status; output in $top)\" >&2; exit 1"
        switch r.outcome {
        case .crash:
            // timeout(1) and aspectctl run give a signal's death as 128+N, as a shell does.
            var s = "if [ \"$status\" -eq \(128 + crashSignal(r, report: report)) ]; then \(yes); fi\n"
            if let child = childCrash(r, report: report) {
                // a process below the command (a pipeline's, a script's child): its mappings,
                // which the recorder wrote as it died, name its executable
                s += "# a crash of \(FaultPoint.fileName(child.program))" + (child.caughtByHandler ? ", \(ProcessCrash.caughtLabel)" : " below the command")
                    + ": the recorder's files name it\n"
                s += "if grep -qs -- \(ExploreReport.shellQuoted("/" + FaultPoint.fileName(child.program) + "$")) \"$top\"/crash/crash-*.maps; then \(yes); fi\n"
            }
            return s + "\(no)\n"
        case .silentDifference:
            // (a run that wrote to stderr on its way is judged by its status and files alone)
            var s = BaselineFiles.said(r.record.differingFiles) ? "if [ \"$status\" -ne \"$base\" ]; then \(no); fi\n"
                : "if [ \"$status\" -ne \"$base\" ] || ! cmp -s stderr base.stderr; then \(no); fi\n"
            // a regular file by its bytes; anything else by being there or not
            s += "differs() { if [ -f \"$1\" ] || [ -f \"$2\" ]; then ! cmp -s \"$1\" \"$2\"; elif [ -e \"$1\" ]; then [ ! -e \"$2\" ]; else [ -e \"$2\" ]; fi; }\n"
            for f in r.record.differingFiles where f != BaselineFiles.stderrName {
                if f == BaselineFiles.stdoutName {
                    s += "if ! cmp -s stdout base.stdout; then \(yes); fi\n"
                } else {
                    let path = ExploreReport.shellQuoted(WorkingFiles.path(ofEntry: f))
                    s += "if differs work/\(path) base/\(path); then \(yes); fi\n"
                }
            }
            return s + "\(no)\n"
        case .hang:
            // timeout(1): 124 when it stopped the command, 137 when it had to kill it.
            return "if [ \"$status\" -eq 124 ] || [ \"$status\" -eq 137 ]; then \(yes); fi\n\(no)\n"
        default:
            guard let check else { return "\(no)\n" }
            let vars = ExploreCampaign.checkVariables(point: r.point, run: "fault", status: "$status", stdout: "$top/stdout", stderr: "$top/stderr")
            let exports = vars.map { k, v in "\(k)=" + (v.hasPrefix("$") ? "\"\(v)\"" : ExploreReport.shellQuoted(v)) }
            // SIGPIPE (141) is a writer's end when its reader went away, not a crash (RunRecord.crashSignal).
            var s = "# A hang (124), aspectctl's own failure (125) or a crash (but SIGPIPE) is another outcome.\n"
            s += "if [ \"$status\" -eq 124 ] || [ \"$status\" -eq 125 ] || { [ \"$status\" -ge 128 ] && [ \"$status\" -ne \(128 + SIGPIPE) ]; }; then \(no); fi\n"
            s += "export " + exports.joined(separator: " ") + "\n"
            s += "if sh -c \(ExploreReport.shellQuoted(check)); then \(no); fi\n\(yes)\n"
            return s
        }
    }
}
