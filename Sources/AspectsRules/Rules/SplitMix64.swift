import CAspectsABI

/// The seeded randomness of rules: which calls a `probability` rule fails, which error of a
/// `fail` list, how short a `short` transfer, which bits a `corrupt` flips — a pure function of
/// (seed, rule key, call number), so tests and explore's plans predict exactly what the preload
/// does. The one definition is aspects_prng.h (CAspectsABI), which the preload compiles too;
/// these are its Swift names.
package enum SplitMix64 {
    package static func mix(_ value: UInt64) -> UInt64 { aspects_mix64(value) }

    package static func draw(seed: UInt64, ruleKey: UInt64, call k: UInt64) -> UInt64 {
        aspects_draw(seed, ruleKey, k)
    }

    /// The key of a rule: FNV-1a of its id.
    package static func ruleKey(id: String) -> UInt64 { FNV1a.hash(id) }

    /// The probability threshold the table stores.
    package static func threshold(_ p: Double) -> UInt64 {
        p >= 1 ? UInt64.max : UInt64((p * 18_446_744_073_709_551_616.0).rounded(.down))
    }

    /// Whether call k of the rule fires (its other conditions aside): whether k is in the
    /// rule's firing schedule (`FiringSchedule`).
    package static func fires(seed: UInt64, id: String, call k: UInt64, probability p: Double) -> Bool {
        FiringSchedule(threshold: threshold(p)).fires(seed: seed, ruleKey: ruleKey(id: id), call: k)
    }

    /// Which of `count` errors (a `fail` list) call k reports when it fires.
    package static func choice(seed: UInt64, id: String, call k: UInt64, count: Int) -> Int {
        Int(aspects_choice(seed, ruleKey(id: id), k, UInt32(count)))
    }

    /// The count a `short` firing on call k gives the original instead of `count`: 1 to
    /// count - 1 (a count below 2 cannot be cut and is not matched).
    package static func shortCount(seed: UInt64, id: String, call k: UInt64, count: UInt64) -> UInt64 {
        shortCount(seed: seed, ruleKey: ruleKey(id: id), call: k, count: count)
    }

    package static func shortCount(seed: UInt64, ruleKey: UInt64, call k: UInt64, count: UInt64) -> UInt64 {
        aspects_short_count(seed, ruleKey, k, count)
    }

    /// The bits a `corrupt` firing on call k flips in the `length` bytes the call returned, in
    /// the order drawn: bit p is bit p % 8 of byte p / 8; `bits` distinct ones, or all of them.
    package static func corruptedBits(seed: UInt64, id: String, call k: UInt64, length: UInt64, bits: Int) -> [UInt64] {
        corruptedBits(seed: seed, ruleKey: ruleKey(id: id), call: k, bitCount: length &* 8, bits: bits)
    }

    /// The same among `bitCount` bits, for a rule's key.
    package static func corruptedBits(seed: UInt64, ruleKey: UInt64, call k: UInt64, bitCount nbits: UInt64, bits: Int) -> [UInt64] {
        var out = [UInt64](repeating: 0, count: Int(ASPECTS_MAX_CORRUPT_BITS))
        let n = out.withUnsafeMutableBufferPointer {
            aspects_corrupt_positions(seed, ruleKey, k, nbits, UInt32(clamping: max(0, bits)), $0.baseAddress)
        }
        return Array(out.prefix(Int(n)))
    }

    /// The bytes a `corrupt` firing leaves: `data` (what the call returned) with those bits flipped.
    package static func corrupted(_ data: [UInt8], seed: UInt64, id: String, call k: UInt64, bits: Int) -> [UInt8] {
        var out = data
        for p in corruptedBits(seed: seed, id: id, call: k, length: UInt64(data.count), bits: bits) {
            out[Int(p / 8)] ^= UInt8(1) << UInt8(p % 8)
        }
        return out
    }
}

/// The firing schedule of a `probability` rule (aspects_prng.h explains the design): call
/// numbers are cut into windows of about 1/p calls, and within each window the distances
/// between firings are seeded geometric gaps, so the calls that fire form a Bernoulli(p) set
/// and the next firing after any call is known at once.
package struct FiringSchedule: Sendable {
    let schedule: aspects_schedule

    /// From the threshold the table stores (p = t / 2^64; UInt64.max: always).
    package init(threshold t: UInt64) { schedule = aspects_schedule_of(t) }

    /// Whether call k (>= 1) fires.
    package func fires(seed: UInt64, ruleKey: UInt64, call k: UInt64) -> Bool {
        withUnsafePointer(to: schedule) { aspects_schedule_fires(seed, ruleKey, $0, k) != 0 }
    }

    /// The first firing after call k, or a lower bound of it.
    package func next(seed: UInt64, ruleKey: UInt64, after k: UInt64) -> UInt64 {
        withUnsafePointer(to: schedule) { aspects_schedule_next(seed, ruleKey, $0, k) }
    }
}
