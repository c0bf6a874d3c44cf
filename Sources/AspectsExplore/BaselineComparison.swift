import Foundation
import AspectsCore

/// The baseline run again, with no fault: a campaign compares every run with the first
/// baseline, which is only sound when the same command in a fresh directory does the same
/// thing each time. Differences (exit status, output, calls per function) mean the runs are not
/// independent — state outside the fresh working directory (a file at an absolute path,
/// $HOME, a server) is the usual cause — or the program is not deterministic.
package struct BaselineComparison: Sendable {
    /// Baseline runs made, the first included.
    package var runs: Int
    /// How the runs after the first differed from it, one line each.
    package var differences: [String]
    /// Whether a run after the first exited otherwise (status, signal or timeout).
    package var statusDiffers = false

    package var isConsistent: Bool { differences.isEmpty }

    /// Why a campaign cannot start: a baseline that exits non-zero is explored as it is only
    /// when it does so every time — then that status is the command's normal one (diff exits
    /// 1 when the files differ, grep when nothing matched); when it varies, no run's status
    /// could be compared with it. nil: it can start.
    package func refusal(first: RunRecord, expected: Int32?) -> String? {
        guard statusDiffers, first.exitStatus != 0 || expected != nil else { return nil }
        return "the baseline exited with status \(first.shellStatus) and then otherwise with no fault injected (\(differences.joined(separator: "; "))): "
            + "its normal status cannot be told, so no run could be compared with it; make the command's runs end alike (prepare its files with --setup)"
    }

    /// The warning explore gives before it starts, nil when the runs agreed.
    package var warning: String? {
        guard !isConsistent else { return nil }
        return "the baseline ran \(runs) times with no fault and did not do the same each time: "
            + differences.joined(separator: "; ")
            + ". Runs are not independent (state outside the fresh working directory — a file at an absolute path, $HOME — is the usual cause), "
            + "so outcomes compared with the first baseline may be wrong"
    }

    /// How `other` (baseline run `n`, from 1) differs from `first`, given each run's calls per
    /// function.
    static func differences(_ first: RunRecord, _ firstCalls: [String: UInt64], _ other: RunRecord, _ otherCalls: [String: UInt64], run n: Int) -> [String] {
        var d: [String] = []
        if first.shellStatus != other.shellStatus || other.timedOut {
            d.append("run \(n) exited \(other.timedOut ? "at the timeout" : String(other.shellStatus)), the first \(first.shellStatus)")
        }
        if !other.sameStdout(as: first) { d.append("run \(n)'s stdout differs (\(other.stdoutBytes) bytes, the first \(first.stdoutBytes))\(firstDifference(first.stdout, other.stdout))") }
        if !other.sameStderr(as: first) { d.append("run \(n)'s stderr differs (\(other.stderrBytes) bytes, the first \(first.stderrBytes))\(firstDifference(first.stderr, other.stderr))") }
        let calls = Set(firstCalls.keys).union(otherCalls.keys).sorted().compactMap { f -> String? in
            let a = firstCalls[f, default: 0], b = otherCalls[f, default: 0]
            return a == b ? nil : "\(f) \(b) (the first \(a))"
        }
        if !calls.isEmpty { d.append("run \(n)'s calls: " + calls.joined(separator: ", ")) }
        return d
    }

    /// `: line 3 "table t already exists"`, the first line where `b` differs from `a` (the
    /// kept ends of two outputs: lines count from the start of the tail when one was longer).
    static func firstDifference(_ a: String, _ b: String) -> String {
        let la = a.split(separator: "\n", omittingEmptySubsequences: false), lb = b.split(separator: "\n", omittingEmptySubsequences: false)
        guard let i = (0..<max(la.count, lb.count)).first(where: { i in (i < la.count ? la[i] : nil) != (i < lb.count ? lb[i] : nil) }) else { return "" }
        let line = i < lb.count ? String(lb[i].prefix(80)) : "(ends)"
        return ": line \(i + 1) \"\(line)\""
    }
}

extension ExploreCampaign {
    /// Runs the baseline `options.baselines - 1` more times (log-only advice on `functions`,
    /// calls counted) and compares each with the first: `first` and its `profiles`.
    package func repeatBaseline(functions: [String], first: RunRecord, profiles: [FunctionProfile]) throws(AspectsError) -> BaselineComparison {
        let firstCalls = Dictionary(profiles.map { ($0.function, $0.calls) }, uniquingKeysWith: +)
        var differences: [String] = [], statusDiffers = false
        let runs = max(2, options.baselines)
        // the first baseline is the survey's first pass (`survey`), whose directory stays
        var files = BaselineFiles(first: WorkingFiles.snapshot(out + "/work/baseline-0"))
        for n in 1..<runs {
            var survey = CallSurvey(functions: functions, preload: options.library)
            let (record, table, dir) = try runOnce("baseline-again-\(n)", rules: survey.rules(for: functions), timeout: RunTimeouts.survey(user: options.timeout, contexts: false))
            survey.record(table, pending: functions)
            statusDiffers = statusDiffers || record.shellStatus != first.shellStatus || record.timedOut
            files.unstable.formUnion(WorkingFiles.snapshot(dir).differences(from: files.first))
            files.stdoutUnstable = files.stdoutUnstable || !record.sameStdout(as: first)
            var d = BaselineComparison.differences(first, firstCalls, record, survey.totals, run: n + 1)
            if !record.timedOut, record.signal == nil, try check(dir, point: nil, record: record, outcomeHint: "baseline") == false {
                d.append("the check failed after run \(n + 1)")
            }
            differences += d
        }
        baselineFiles = files
        var comparison = BaselineComparison(runs: runs, differences: differences)
        comparison.statusDiffers = statusDiffers
        return comparison
    }
}
