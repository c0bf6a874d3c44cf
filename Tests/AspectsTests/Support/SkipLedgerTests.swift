import Testing

/// A bare `swift test` says at its end what it skipped and why (Support/Requirements.swift).
@Suite(.tags(.fast)) struct SkipLedgerTests {
    @Test func theLedgerHasOneLinePerRequirementWithItsCount() {
        let ledger = SkipLedger()
        #expect(ledger.lines().isEmpty, "nothing skipped: nothing said")
        ledger.note("needs sqlite3 (.ci/run installs it)")
        ledger.note("needs strace")
        ledger.note("needs sqlite3 (.ci/run installs it)")
        #expect(ledger.lines() == [
            "3 skipped (tests, suites or doc examples not run; the runner's count above includes them):",
            "  skipped 2: needs sqlite3 (.ci/run installs it)",
            "  skipped 1: needs strace",
        ])
    }

    /// The trait skips exactly when its condition fails.
    @Test(.requires(true, "never skipped")) func aMetRequirementRunsTheTest() {
        #expect(!SkipLedger.shared.lines().contains { $0.contains("never skipped") })
    }
}
