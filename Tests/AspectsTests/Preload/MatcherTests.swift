import Testing

/// The preload's own glob (it cannot use libc's fnmatch, which may allocate) against fnmatch.
@Suite struct MatcherTests {
    @Test func globAgreesWithFnmatch() throws {
        let bin = try Fixture.build("glob_conformance",
                                    flags: ["-O1"] + Paths.preloadIncludes,
                                    extraSources: [Paths.root + "/Sources/CPreload/os/glob.c"])
        let r = try Proc.run(bin)
        #expect(r.status == 0)
        #expect(r.stdout.hasSuffix(" fixed), 0 mismatches\n"), "\(r.stdout)")
        // The random patterns must exercise the byte-comparing matcher of fixed patterns too.
        let fixed = r.stdout.split(separator: "(").last.flatMap { Int($0.split(separator: " ").first ?? "") } ?? 0
        #expect(fixed > 10_000, "\(r.stdout)")
    }
}
