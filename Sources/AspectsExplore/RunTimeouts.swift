/// How long a run may take before it is killed as a hang, from how long the baseline took: on
/// a loaded machine a fixed `--timeout` turns slow runs into "hangs" that never reproduce, and
/// the baseline of `--strategy context` (every call unwound) costs many times a plain one.
package enum RunTimeouts {
    /// A run may take this many times its baseline (the survey's first pass: with calling
    /// contexts for `--strategy context`, so its cost is counted) ...
    package static let baselineFactor = 10.0
    /// ... and at least this long when `--timeout` says nothing.
    package static let floor = 2.0
    /// A hang is run again with this many times the limit: one that ends then was slow, not a
    /// hang, and the reproducer script waits this long too.
    package static let confirmationFactor = 3.0

    /// A run's limit: `--timeout` (else `floor`), raised to `baselineFactor` × the baseline.
    package static func run(user: Double?, baseline: Double) -> Double {
        max(user ?? floor, baselineFactor * baseline)
    }

    /// The limit under which a hang must still be running to be one.
    package static func confirmation(_ timeout: Double) -> Double { timeout * confirmationFactor }

    /// The baseline's own limit: `--timeout` (else 600 s); a survey that records every call's
    /// context (`--strategy context`) unwinds each call, so gets `baselineFactor` times it.
    package static func survey(user: Double?, contexts: Bool) -> Double {
        guard let user else { return 600 }
        return contexts ? user * baselineFactor : user
    }
}
