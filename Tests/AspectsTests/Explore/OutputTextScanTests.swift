import Testing
@testable import AspectsExplore

/// The byte scans that look at every run's stderr (`OutputPhrase`, `RunTextNormalizer`) agree
/// with the regular expressions they replaced, kept here as the reference: on lines programs
/// print and on generated lines made of the pieces those patterns look for.
@Suite struct OutputTextScanTests {
    nonisolated(unsafe) static let referenceRunDirectory = #/\S*/work/(?:baseline-again|baseline|run|again|repro|locate|longer)-[0-9]+/#
    nonisolated(unsafe) static let referenceAddress = #/0x[0-9a-fA-F]+/#
    nonisolated(unsafe) static let referenceNumber = #/[0-9]+/#

    static func referenceNormalized(_ line: String) -> String {
        line.replacing(referenceRunDirectory, with: "<run>").replacing(referenceAddress, with: "<addr>").replacing(
            referenceNumber, with: "N")
    }

    nonisolated(unsafe) static let referenceMessages: [Regex<Substring>] = [
        #/cannot allocate memory/#, #/out of memory/#, #/memory exhausted/#, #/not enough memory/#,
        #/memory allocation of [0-9]+ bytes failed/#, #/insufficient memory/#,
    ].map { $0.ignoresCase() }
    nonisolated(unsafe) static let referenceBroken: [Regex<Substring>] = [
        #/assertion .* failed/#, #/corrupted/#, #/double free/#, #/free\(\): invalid/#, #/stack smashing detected/#,
        #/buffer overflow detected/#, #/AddressSanitizer/#,
    ].map { $0.ignoresCase() }

    static let printed = [
        "cannot open /tmp/x/aspects-explore/work/run-00012/f.txt at 0x7ffd12ab: 17 bytes",
        "again: /o/work/again-3/out", "sed: couldn't open temporary file /o/work/run-00007/sedAb12Cd: No space left on device",
        "x=/a/work/run-1/b/work/run-22/c y=/work/run-/d z=/work/runner-3 w=work/run-4", "/work/baseline-again-2/x /work/baseline-5",
        "jq: error: cannot allocate memory", "Error: out of memory", "memory allocation of 1024 bytes failed",
        "MEMORY ALLOCATION OF 12 BYTES FAILED", "memory allocation of  bytes failed", "cc1: Virtual memory exhausted",
        "x: x.c:3: f: Assertion `p' failed.", "malloc(): corrupted top size", "free(): invalid pointer", "*** stack smashing detected ***",
        "==1==ERROR: AddressSanitizer: heap-use-after-free", "10x1f 0x 0xg 0X12 0xABCdef99z", "ünïcode /tmp/ü/work/repro-9/ä 0x1",
        "", "   ", "\t/work/locate-12\t", "assertion failed", "assertion  failed",
    ]

    /// Lines made of the patterns' pieces in random order, some cut short.
    static func generated(count: Int) -> [String] {
        let pieces = [
            "/work/", "run", "again", "baseline", "-", "12", "0x", "fF", "9", " ", "\t", "/tmp", "x", "memory", "allocation of ",
            " bytes failed", "out of ", "MEMORY", "assertion ", " failed", "corrupted", "double free", "ü", "free(): invalid",
        ]
        var rng = SeededGenerator(seed: 0x7e47)
        return (0..<count).map { _ in (0..<Int.random(in: 0...12, using: &rng)).map { _ in pieces.randomElement(using: &rng)! }.joined() }
    }

    @Test(.tags(.fast)) func normalizingAgreesWithTheRegularExpressions() {
        for line in Self.printed + Self.generated(count: 3000) {
            #expect(RunTextNormalizer.normalized(line) == Self.referenceNormalized(line), "\(line)")
        }
    }

    @Test(.tags(.fast)) func phrasesAgreeWithTheRegularExpressions() {
        for line in Self.printed + Self.generated(count: 3000) {
            #expect(FailFast.messages.map { $0.occurs(in: line) } == Self.referenceMessages.map { line.contains($0) }, "\(line)")
            #expect(FailFast.brokenProgram.map { $0.occurs(in: line) } == Self.referenceBroken.map { line.contains($0) }, "\(line)")
        }
    }
}
