/// The tests' one pseudo-random generator, SplitMix64: what a test draws is a pure function
/// of its seed, so a failure repeats.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed &* 0x9e37_79b9_7f4a_7c15 }
    mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
    mutating func below(_ n: UInt64) -> UInt64 { next() % n }
    mutating func chance(_ p: Double) -> Bool { Double(next() >> 11) * 0x1p-53 < p }
}
