import AspectsCore
import AspectsRules

/// glibc's process start-up in the baseline's calling contexts: `__libc_start_call_main`,
/// `__libc_start_main`, `_start` (`CrashMachinery.startup`) lie below `main` in every context
/// that reaches it, tell no two callers apart, and sit at other offsets in another glibc
/// build — a reproducer whose context named them would not match there. Context points stop
/// before them (`CallContext.before`).
extension ExploreCampaign {
    /// The frames (past each context's site) of `profiles`' contexts that are start-up code,
    /// told by their symbol tables' functions (libc6-dbg's `.symtab` names glibc's static
    /// `__libc_start_call_main`).
    package func startupFrames(of profiles: [FunctionProfile]) -> Set<CallSite> {
        let frames = Set(profiles.flatMap { $0.contexts.keys.flatMap { $0.frames.dropFirst() } })
        guard !frames.isEmpty, let program = try? ProgramPath.resolve(options.command[0]) else { return [] }
        let images = Set(profiles.flatMap { $0.images.keys }).filter { $0.hasPrefix("/") }.subtracting([program]).sorted()
        let symbols = SiteSymbolizer.forPrograms([program] + images).symbols(of: frames)
        return Set(symbols.filter { CrashMachinery.startup.contains($0.value) }.keys)
    }
}
