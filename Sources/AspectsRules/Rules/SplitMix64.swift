import CAspectsABI

/// The seeded randomness of rules, bit for bit the preload's prng.h (a test compares them on
/// shared vectors): which calls a `probability` rule fails is a pure function of
/// (seed, rule key, call number), so tests can predict exactly which calls fail.
package enum SplitMix64 {
    package static func mix(_ value: UInt64) -> UInt64 {
        var z = value &+ 0x9e37_79b9_7f4a_7c15
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }

    package static func draw(seed: UInt64, ruleKey: UInt64, call k: UInt64) -> UInt64 {
        mix(seed ^ mix(ruleKey ^ mix(k)))
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
        Int(mix(draw(seed: seed, ruleKey: ruleKey(id: id), call: k)) % UInt64(count))
    }

    // The data faults (the preload's advice_data.h, operation for operation).
    static let shortSalt: UInt64 = 0x7368_6f72_7400_0000   // "short"
    static let corruptSalt: UInt64 = 0x636f_7272_7570_7400 // "corrupt"

    /// The count a `short` firing on call k gives the original instead of `count`: 1 to
    /// count - 1 (a count below 2 cannot be cut and is not matched).
    package static func shortCount(seed: UInt64, id: String, call k: UInt64, count: UInt64) -> UInt64 {
        shortCount(seed: seed, ruleKey: ruleKey(id: id), call: k, count: count)
    }

    package static func shortCount(seed: UInt64, ruleKey: UInt64, call k: UInt64, count: UInt64) -> UInt64 {
        guard count >= 2 else { return count }
        return 1 + mix(draw(seed: seed, ruleKey: ruleKey, call: k) ^ shortSalt) % (count - 1)
    }

    /// The bits a `corrupt` firing on call k flips in the `length` bytes the call returned, in
    /// the order drawn: bit p is bit p % 8 of byte p / 8; `bits` distinct ones, or all of them.
    package static func corruptedBits(seed: UInt64, id: String, call k: UInt64, length: UInt64, bits: Int) -> [UInt64] {
        corruptedBits(seed: seed, ruleKey: ruleKey(id: id), call: k, bitCount: length &* 8, bits: bits)
    }

    /// The same among `bitCount` bits, for a rule's key.
    package static func corruptedBits(seed: UInt64, ruleKey: UInt64, call k: UInt64, bitCount nbits: UInt64, bits: Int) -> [UInt64] {
        let want = min(bits, Int(ASPECTS_MAX_CORRUPT_BITS))
        if nbits <= UInt64(want) { return Array(0..<nbits) }
        let d = draw(seed: seed, ruleKey: ruleKey, call: k) ^ corruptSalt
        var out: [UInt64] = []
        var j: UInt64 = 0
        while out.count < want && j < 64 * UInt64(ASPECTS_MAX_CORRUPT_BITS) {
            let p = mix(d &+ j) % nbits
            if !out.contains(p) { out.append(p) }
            j += 1
        }
        return out
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

/// The firing schedule of a `probability` rule, operation for operation the preload's
/// (prng.h, which explains the design): call numbers are cut into windows of about 1/p calls,
/// and within each window the distances between firings are seeded geometric gaps, so the
/// calls that fire form a Bernoulli(p) set and the next firing after any call is known at once.
package struct FiringSchedule: Sendable, Equatable {
    /// ln(1 - p); 0 for a rule that never fires.
    package let lnQ: Double
    /// Windows of 2^windowLog calls.
    package let windowLog: UInt32
    /// p rounds to 1: every call fires.
    package let always: Bool

    static let maxGaps: UInt64 = 4096
    static let maxWindows = 64

    /// From the threshold the table stores (p = t / 2^64; UInt64.max: always).
    package init(threshold t: UInt64) {
        if t == UInt64.max { (lnQ, windowLog, always) = (0, 1, true); return }
        if t == 0 { (lnQ, windowLog, always) = (0, 1, false); return }
        let p = Double(t) * 0x1p-64
        if p >= 0.9999999999999999 { (lnQ, windowLog, always) = (0, 1, true); return }
        let pp = p * p
        lnQ = p < 0x1p-20 ? -(p + pp / 2.0 + (pp * p) / 3.0) : Self.ln(1.0 - p)
        windowLog = min(1 + UInt32(t.leadingZeroBitCount), 62)
        always = false
    }

    /// ln x for a normal double 0 < x <= 1, as prng.h's asp_ln computes it.
    static func ln(_ x: Double) -> Double {
        var bits = x.bitPattern
        var e = Int64((bits >> 52) & 0x7ff) - 1023
        bits = (bits & 0x000f_ffff_ffff_ffff) | 0x3ff0_0000_0000_0000
        var m = Double(bitPattern: bits)
        if m > 1.4142135623730951 {
            m = m * 0.5
            e = e + 1
        }
        let s = (m - 1.0) / (m + 1.0)
        let z = s * s
        var series = 0.06666666666666667
        series = 0.07692307692307693 + z * series
        series = 0.09090909090909091 + z * series
        series = 0.1111111111111111 + z * series
        series = 0.14285714285714285 + z * series
        series = 0.2 + z * series
        series = 0.3333333333333333 + z * series
        series = 1.0 + z * series
        return Double(e) * 0.6931471805599453 + (2.0 * s) * series
    }

    /// Gap j of window w (at least 1).
    func gap(seed: UInt64, ruleKey: UInt64, window w: UInt64, index j: UInt64) -> UInt64 {
        let x = SplitMix64.mix(SplitMix64.draw(seed: seed, ruleKey: ruleKey, call: w) &+ j)
        let u = Double((x >> 11) + 1) * 0x1p-53
        let q = Self.ln(u) / lnQ
        return 1 + (q < 4.0e18 ? UInt64(q) : 4_000_000_000_000_000_000)
    }

    /// Whether call k (>= 1) fires.
    package func fires(seed: UInt64, ruleKey: UInt64, call k: UInt64) -> Bool {
        if always { return true }
        if lnQ == 0 || k == 0 { return false }
        let w = (k - 1) >> UInt64(windowLog), base = w << UInt64(windowLog), size = UInt64(1) << UInt64(windowLog)
        var pos: UInt64 = 0
        for j in 0..<Self.maxGaps {
            let g = gap(seed: seed, ruleKey: ruleKey, window: w, index: j)
            if g > size - pos { return false }
            pos += g
            if base + pos >= k { return base + pos == k }
        }
        return false
    }

    /// The first firing after call k, or a lower bound of it (as prng.h's asp_schedule_next).
    package func next(seed: UInt64, ruleKey: UInt64, after k: UInt64) -> UInt64 {
        if always { return k &+ 1 }
        if lnQ == 0 { return UInt64.max }
        let size = UInt64(1) << UInt64(windowLog)
        var w = k >> UInt64(windowLog)
        for _ in 0..<Self.maxWindows {
            let base = w << UInt64(windowLog)
            if base >> UInt64(windowLog) != w { return UInt64.max }
            var pos: UInt64 = 0
            for j in 0..<Self.maxGaps {
                let g = gap(seed: seed, ruleKey: ruleKey, window: w, index: j)
                if g > size - pos { break }
                pos += g
                if base + pos > k { return base + pos }
            }
            w += 1
        }
        return w << UInt64(windowLog)
    }
}
