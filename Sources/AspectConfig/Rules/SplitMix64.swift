/// The seeded draw of `probability` rules, bit for bit the preload's prng.h (a test compares
/// them on shared vectors): the decision for call k of a rule is a pure function of
/// (seed, rule key, k), so tests can predict exactly which calls fail.
public enum SplitMix64 {
    public static func mix(_ value: UInt64) -> UInt64 {
        var z = value &+ 0x9e37_79b9_7f4a_7c15
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }

    public static func draw(seed: UInt64, ruleKey: UInt64, call k: UInt64) -> UInt64 {
        mix(seed ^ mix(ruleKey ^ mix(k)))
    }

    /// The key of a rule: FNV-1a of its id.
    public static func ruleKey(id: String) -> UInt64 { FNV1a.hash(id) }

    /// The probability threshold the table stores.
    public static func threshold(_ p: Double) -> UInt64 {
        p >= 1 ? UInt64.max : UInt64((p * 18_446_744_073_709_551_616.0).rounded(.down))
    }

    /// Whether call k of the rule fires (its other conditions aside), and which of `choices`
    /// (a `fail` list) it reports.
    public static func fires(seed: UInt64, id: String, call k: UInt64, probability p: Double) -> Bool {
        let t = threshold(p)
        return t == UInt64.max || draw(seed: seed, ruleKey: ruleKey(id: id), call: k) < t
    }

    public static func choice(seed: UInt64, id: String, call k: UInt64, count: Int) -> Int {
        Int(mix(draw(seed: seed, ruleKey: ruleKey(id: id), call: k)) % UInt64(count))
    }
}
