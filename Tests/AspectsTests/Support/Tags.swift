import Testing

/// What a test costs to run, to choose a selection by (Tests/README.md has the commands).
extension Tag {
    /// Starts no program at all — no fixture build, no preload, no aspectctl. TestProcess
    /// records an issue when a test with this tag starts one, so the tag cannot drift.
    @Tag static var fast: Self
    /// Runs programs nobody here wrote (sed, jq, sqlite3, git, python3, curl, strace, valgrind…)
    /// as the subject or the oracle of the test; a compiler building a fixture does not count.
    @Tag static var realPrograms: Self
    /// Runs aarch64 programs under qemu-user.
    @Tag static var qemu: Self
    /// Takes more than 5 s alone on an idle machine.
    @Tag static var slow: Self
}
