/// glibc's names for the code around a program's own: what carries a crash out (abort, raise,
/// the assertion and heap-check reporters), what starts a process, and which object is the C
/// library. Bugs are named past the first and without the second; one definition for every
/// place that needs them (bug grouping, fail-fast, calling contexts).
package enum CrashMachinery {
    /// Frames that carry a crash out rather than cause it: every abort and every assertion
    /// passes through them, so they tell no two crashes apart.
    package static let frames: Set<String> = Set([
        "raise", "abort", "__GI_raise", "__GI_abort", "pthread_kill", "__pthread_kill", "__pthread_kill_implementation",
        "__pthread_kill_internal", "__libc_message", "__libc_message_impl", "__libc_fatal",
    ]).union(verdicts)

    /// Frames that report a broken program, not an exhausted machine: an assertion, heap
    /// corruption (`malloc(): corrupted`, `double free`), a fortify or stack-protector check.
    /// A crash through one of them is never fail-fast.
    package static let verdicts: Set<String> = [
        "__assert_fail", "__assert_fail_base", "__GI___assert_fail", "__assert_perror_fail", "__malloc_assert",
        "malloc_printerr", "__fortify_fail", "__chk_fail", "__stack_chk_fail",
    ]

    /// glibc's process start-up, below `main`: the same for every call, and at other offsets
    /// in another glibc build, so no part of a calling context.
    package static let startup: Set<String> = ["__libc_start_call_main", "__libc_start_main", "__libc_start_main_impl", "_start"]

    /// Whether a frame's object is the C library (`libc.so.6`): a crash inside it (memset,
    /// strlen) is most often its caller's bad argument.
    package static func isCLibrary(_ object: String) -> Bool {
        let name = object.split(separator: "/").last.map(String.init) ?? object
        return name.hasPrefix("libc.so") || (name.hasPrefix("libc-") && name.hasSuffix(".so"))
    }

    /// How deep the crash machinery can reach below the crashing frame: abort ← raise ←
    /// pthread_kill and the assertion's two frames, with room for a stale scanned frame or two.
    static let depth = 8

    /// The frames that say where a crash happened: the stack past the last frame of the
    /// machinery near its top (a frame scanned in between can be stale), without the
    /// preload's own frames (its trampolines sit between a program and the functions it calls).
    package static func causalFrames(_ stack: [StackFrame]) -> [StackFrame] {
        let top = stack.prefix(depth)
        let start = top.lastIndex { $0.symbol.map { frames.contains($0) } == true }.map { $0 + 1 } ?? 0
        return stack[start...].filter { !$0.site.object.hasPrefix("libaspects") }
    }

    /// Whether the stack passed through an assertion or heap-check reporter near its top.
    package static func reportsABrokenProgram(_ stack: [StackFrame]) -> Bool {
        stack.prefix(depth).contains { $0.symbol.map { verdicts.contains($0) } == true }
    }
}
