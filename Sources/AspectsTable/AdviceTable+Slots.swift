#if canImport(Glibc)
import Glibc
#endif
import CAspectsABI
import AspectsCore
import AspectsRules

// Raw access to the table's slots, lists and rings by index.
extension AdviceTable {
    package func field<Root, T>(_ p: UnsafeMutablePointer<Root>, _ key: WritableKeyPath<Root, T>) -> UnsafeMutablePointer<T> {
        (UnsafeMutableRawPointer(p) + MemoryLayout<Root>.offset(of: key)!).assumingMemoryBound(to: T.self)
    }

    // Addresses from the validated geometry (callers keep indices below its capacities).
    package func rule(_ slot: Int) -> UnsafeMutablePointer<aspects_rule> { element(geometry.slots, slot) }
    func list(_ group: Int) -> UnsafeMutablePointer<aspects_group_list> { element(geometry.lists, group) }
    func armed(_ group: Int) -> UnsafeMutablePointer<UInt8> { element(geometry.armed, group) }
    package func event(_ index: Int) -> UnsafeMutablePointer<aspects_event> { element(geometry.ring, index) }
    func statistic(_ index: Int) -> UnsafeMutablePointer<aspects_process_stat> { element(geometry.statistics, index) }
    func source(_ slot: Int) -> UnsafeMutablePointer<aspects_rule_source> { element(geometry.sources, slot) }

    func element<T>(_ offset: Int, _ index: Int) -> UnsafeMutablePointer<T> {
        (base + offset + index * MemoryLayout<T>.stride).assumingMemoryBound(to: T.self)
    }
}
