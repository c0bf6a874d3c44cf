import ArgumentParser
import AspectsTable
import CAspectsABI
import Foundation

/// Counts read from a table are untrusted: sums saturate rather than trap.
enum AdviceTableCounts {
    static func add(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let (s, o) = a.addingReportingOverflow(b)
        return o ? .max : s
    }
}

/// The per-rule table printed by `stats` and `run --report`.
enum Report {
    static func table(_ rules: [TableRule]) -> String {
        if rules.isEmpty { return "no rules" }
        let rows = [["rule", "symbol", "position", "matched", "fired", "state"]] + rules.map {
            [$0.id, $0.symbol, $0.position, String($0.matched), String($0.fired), $0.state.rawValue]
        }
        let widths = (0..<6).map { c in rows.map { $0[c].count }.max()! }
        return rows.map { row in
            row.enumerated().map { c, cell in
                c >= 3 && c <= 4 ? String(repeating: " ", count: widths[c] - cell.count) + cell
                    : cell + String(repeating: " ", count: widths[c] - cell.count)
            }.joined(separator: "  ").trimmingTrailingSpaces()
        }.joined(separator: "\n")
    }
}

extension String {
    func trimmingTrailingSpaces() -> String {
        var s = self
        while s.last == " " { s.removeLast() }
        return s
    }
}
