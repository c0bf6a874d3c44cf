#if canImport(Glibc)
import Glibc
#endif

/// A test hook of debug builds: with ASPECTS_TEST_WRITER_STOP=STEP in its environment, a
/// writer stops itself (SIGSTOP) when it reaches STEP of a batch — "filling", "registered",
/// "removing", "before-commit", "committed", "normalizing" — or of `create` ("create-made": the
/// segment is made and not filled; "create-linking": the table is filled, not yet linked in
/// under its name), so that the writer-kill tests can
/// SIGKILL it exactly there. Read once; without the variable it costs one comparison per step.
/// A release build has no hook: an environment variable must not be able to stop a writer
/// holding a table's lock.
enum WriterStop {
    #if DEBUG
    static let step: String? = {
        guard let v = getenv("ASPECTS_TEST_WRITER_STOP") else { return nil }
        return String(cString: v)
    }()

    static func at(_ name: String) {
        if let step, step == name { raise(SIGSTOP) }
    }
    #else
    @inline(__always) static func at(_ name: String) {}
    #endif
}
