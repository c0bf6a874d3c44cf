import CAspectsABI
import AspectsCore

/// Where the advice runs (`before`, `instead`, `after` the original) and what each position
/// lets a rule's action do.
extension RuleCompiler {
    /// The position suits the function and the action: a function that never returns takes
    /// only `before`; only `instead` and `after` decide the result, and `instead` must; only
    /// `before` changes the arguments.
    func checkPosition(_ r: Rule, group: CatalogGroup, label: String) throws(AspectsError) {
        let fail = RuleErrors(label: label)
        let a = r.action
        if group.isNoReturn && r.position != .before {
            throw fail(.positionNotAllowed, "position", "\(r.symbol) never returns, so only \"before\" advice can run", fix: "use \"position\": \"before\"")
        }
        let changesResult = a.fail != nil || a.returnValue != nil || a.errno != nil
        if r.position == .before && changesResult {
            throw fail(.positionNotAllowed, "position", "\"before\" advice runs before the original and cannot change its result",
                       fix: "use \"instead\" to replace the call, or \"after\" to change its result afterwards")
        }
        if r.position == .instead && a.fail == nil && a.returnValue == nil && a.call == nil {
            throw fail(.invalidValue, "action", "\"instead\" advice replaces the call, so it must say what the caller gets",
                       fix: "add \"fail\": true, \"fail\": \"E...\", \"return\": N or \"call\" (or use \"before\" for a delay or log)")
        }
        if r.position != .before && !a.args.isEmpty {
            throw fail(.positionNotAllowed, "action.args", "arguments can only be changed before the original runs", fix: "use \"position\": \"before\"")
        }
    }

    /// The slot's `position` (enum aspects_position).
    static func positionCode(_ p: Rule.Position) -> UInt32 {
        switch p {
        case .before: return ASPECTS_POSITION_BEFORE.rawValue
        case .instead: return ASPECTS_POSITION_INSTEAD.rawValue
        case .after: return ASPECTS_POSITION_AFTER.rawValue
        }
    }
}
