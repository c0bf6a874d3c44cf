import ArgumentParser
import AspectsTable
import Foundation

/// A drawn seed is printed, so that any run can be repeated with `"seed": N`.
func reportDrawnSeeds(_ added: [AdviceTable.Added]) {
    for line in drawnSeedNotices(added) { Console.write(line + "\n") }
}

/// The notice for each rule whose seed was drawn: how to repeat the run.
func drawnSeedNotices(_ added: [AdviceTable.Added]) -> [String] {
    added.filter(\.seedWasDrawn).map { "aspectctl: rule \($0.id): seed \($0.seed!) (drawn; add \"seed\": \($0.seed!) to \"when\" to repeat this run)" }
}
