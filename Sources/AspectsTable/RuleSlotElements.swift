import CAspectsABI

/// Elements of the rule slot's arrays, which Swift imports as tuples. RuleSlot.swift (generated
/// from config/rule-slot.spec) gives each array typed accessors on top of these; an index past
/// the array, or an element type whose size does not tile the array, gives nil.
package enum SlotArray {
    /// Element `i` of `tuple`, an array of `count` elements of E.
    package static func element<Tuple, E>(_ tuple: Tuple, _ i: Int, count: Int) -> E? {
        guard i >= 0, i < count, MemoryLayout<Tuple>.size == count * MemoryLayout<E>.stride else { return nil }
        return withUnsafeBytes(of: tuple) { $0.loadUnaligned(fromByteOffset: i * MemoryLayout<E>.stride, as: E.self) }
    }

    /// Where element `i` of the slot's array at `path` is, for a writer to store it in place.
    package static func element<Tuple, E>(_ slot: UnsafeMutablePointer<aspects_rule>, _ path: WritableKeyPath<aspects_rule, Tuple>,
                                  _ i: Int, count: Int) -> UnsafeMutablePointer<E>? {
        guard i >= 0, i < count, MemoryLayout<Tuple>.size == count * MemoryLayout<E>.stride else { return nil }
        return (UnsafeMutableRawPointer(slot) + MemoryLayout<aspects_rule>.offset(of: path)!).assumingMemoryBound(to: E.self) + i
    }
}
