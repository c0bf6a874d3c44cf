import AspectsRules

/// The slot's counting fields as the compiled rule gives them (config/rule-slot.spec stores
/// them with `<- slotNth` ...): what the preload reads, in the slot's terms.
extension CompiledRule {
    var slotNth: UInt64 { rule.when.nth ?? 0 }
    /// `first` F: `every` counts from call F, which the slot says as after F - 1 and the
    /// ASPECTS_RULE_EVERY_FROM flag.
    var slotAfter: UInt64 { rule.when.first.map { $0 - 1 } ?? (rule.when.after ?? 0) }
    var slotEvery: UInt64 { rule.when.every ?? 0 }
    var slotTimes: UInt64 { rule.when.times ?? 0 }
}
