import CAspectsABI
import AspectsCore

/// A rule checked against the catalog, in the form the table stores.
public struct CompiledRule: Sendable, Equatable {
    package struct Matcher: Sendable, Equatable {
        package var arg: Int
        package var kind: UInt8      // enum aspects_match_kind
        package var type: ABIType
        package var a: UInt64
        package var b: UInt64
        package var pattern: String?
    }

    package var rule: Rule
    /// The export the rule names (for display) and the alias group it applies to.
    package var function: CatalogFunction
    package var group: Int
    package var position: UInt32
    package var actions: UInt32
    package var errnoValue: Int32
    package var returnValue: Int64
    package var delayNanoseconds: UInt64
    package var signalNumber: UInt32
    package var scope: UInt32
    package var flags: UInt32
    package var matchers: [Matcher]
    package var argSets: [(index: UInt8, value: Int64)]
    /// `fail` with a list: the codes one is drawn from.
    package var errnoChoices: [Int32] = []
    /// `probability` as a threshold on the 64-bit draw (UInt64.max = always).
    package var probability: UInt64 = 0
    /// The seed given, or nil when the table writer must draw one.
    package var seed: UInt64?
    package var processPattern: String?
    package var callerPattern: String?
    /// `site`: the calling object's file name and the return address's offset in it.
    package var site: CallSite?
    /// `context`: its frames (the first is `site`) and their hash, as the slot stores it.
    package var context: CallContext?
    /// For a function advised from its prototype (not in the catalog): its signature. The table
    /// writer gives it a group of its own.
    package var prototype: CSignature?
    /// Its fixed parameters (the rest are forwarded variadic arguments).
    package var prototypeFixedCount = 0
    /// Struct types it passes or returns by value: their field types, and their tags in order.
    package var prototypeStructs: [[ABIType]] = []
    package var prototypeStructOrder: [String] = []
    /// A struct result's bytes, laid out as C does (aspects_rule.result_off/len).
    package var resultBytes: [UInt8]?
    /// A rule on several functions (`"symbol": [...]`, `"family"`): the groups besides
    /// `group`, whose lists hold the same slot (one rule, one counter).
    package var familyGroups: [Int] = []
    /// For each of `familyGroups`, each matcher's argument number in that group (a condition
    /// on an argument named, not numbered: open's `path` is argument 0, openat's 1).
    package var familyArgs: [[UInt8]] = []
    /// Bytes of the strings area the patterns take (the family list goes after them).
    package var stringBytes = 0
    /// After rules: the original's result range and errno (aspects_rule.result_*).
    package var resultMin: Int64 = 0, resultMax: Int64 = 0
    package var resultErrno: Int32 = 0
    package var resultChecks: UInt32 = 0
    /// `"lt_arg"` (result check bit 2): the group's argument the result must be below.
    package var resultArg: UInt32 = 0
    /// `call`: the object as dlopen takes it and the function's name.
    package var callObject: String?
    package var callFunction: String?
    /// `corrupt`, `short`: the group's arguments holding the data, its count and the item size
    /// (ASPECTS_NO_ARG: a byte count), from the catalog's `data:` line.
    package var dataBuffer = UInt8(ASPECTS_NO_ARG), dataCount = UInt8(ASPECTS_NO_ARG), dataSize = UInt8(ASPECTS_NO_ARG)
    /// `corrupt`: bits flipped per firing.
    package var corruptBits: UInt32 = 0

    public static func == (a: CompiledRule, b: CompiledRule) -> Bool {
        a.rule == b.rule && a.group == b.group && a.actions == b.actions && a.matchers == b.matchers
            && a.returnValue == b.returnValue && a.errnoValue == b.errnoValue
    }

}

/// Checks decoded rules against the catalog and compiles them. Validation happens in full
/// before anything is written: a file with one bad rule writes nothing.
package struct RuleCompiler: Sendable {
    package var catalog: Catalog

    package init(catalog: Catalog = .builtIn) { self.catalog = catalog }

    package func compile(_ rules: [Rule]) throws(AspectsError) -> [CompiledRule] {
        let (compiled, errors) = compileEach(rules)
        if let first = errors.first { throw first }
        return compiled
    }

    /// Every rule that compiles, and the error of each one that does not (`check` reports
    /// them all).
    /// `positions`: each rule's place in its file (from 1), when some rules of it were left out.
    package func compileEach(_ rules: [Rule], positions: [Int]? = nil) -> (compiled: [CompiledRule], errors: [AspectsError]) {
        var out: [CompiledRule] = []
        var errors: [AspectsError] = []
        var ids: [String: Int] = [:]
        let single = (positions?.count ?? rules.count) == 1 && positions?.first ?? 1 == 1
        for (n, r) in rules.enumerated() {
            let place = positions.map { n < $0.count ? $0[n] : n + 1 } ?? n + 1
            let label = r.id.map { "rule \"\($0)\"" } ?? (single ? "rule" : "rule \(place)")
            if let id = r.id {
                if let first = ids[id] {
                    errors.append(AspectsError(.duplicateID, rule: label, field: "id", "id \"\(id)\" is used by rule \(first) too", fix: "give each rule its own id"))
                    continue
                }
                ids[id] = place
            }
            do { out.append(try compile(r, label: label)) } catch { errors.append(error) }
        }
        return (out, errors)
    }

    package func compile(_ r: Rule, label: String) throws(AspectsError) -> CompiledRule {
        if r.family != nil || !r.alsoSymbols.isEmpty { return try compileFamily(r, label: label) }
        return try compileOne(r, label: label)
    }

    /// One rule on one function. Each step decides one part of the slot, in the order a rule's
    /// errors are found: of several problems, the one a step before the others finds is named.
    func compileOne(_ r: Rule, label: String) throws(AspectsError) -> CompiledRule {
        var r = r
        let (function, group, prototype) = try adviseFunction(r, label: label)
        if r.positionFromCatalog { r.position = group.failurePosition }
        if prototype == nil { try checkCatalogPrototype(r, function: function, label: label) }
        try checkPosition(r, group: group, label: label)
        try checkFailOrReturn(r.action, label: label)
        var c = CompiledRule(rule: r, function: function, group: function.groupIndex, position: Self.positionCode(r.position),
                             actions: 0, errnoValue: 0, returnValue: 0, delayNanoseconds: 0,
                             signalNumber: 0, scope: Self.scopeCode(r.scope), flags: 0, matchers: [], argSets: [])
        c.prototype = prototype
        c.prototypeFixedCount = function.fixedCount
        try compileFailure(r, function: function, group: group, isPrototype: prototype != nil, into: &c, label: label)
        try compileReturn(r, sig: function.signature, into: &c, label: label)
        try compileErrno(r, group: group, into: &c, label: label)
        try compileDelaySignalAndLog(r.action, into: &c, label: label)
        try compileArgumentSets(r, function: function, group: group, into: &c, label: label)
        try compileProbability(r, into: &c, label: label)
        try compileFiringLimit(r, into: &c, label: label)
        try compileWhereFrom(r, into: &c, label: label)
        try compileCounting(r.when, into: &c, label: label)
        try compileMatchers(r, function: function, group: group, into: &c, label: label)
        try countSlotStrings(r.when, into: &c, label: label)
        try compileCodeAndData(r, function: function, group: group, into: &c, label: label)
        try compileResultCondition(r, sig: function.signature, function: function, group: group, into: &c, label: label)
        if let prototype {
            try layOutPrototypeStructs(r, sig: prototype, into: &c, label: label)
            try compileStructResult(r, sig: prototype, into: &c, label: label)
        }
        return c
    }

    /// Whether the rule draws from its seed (so the writer must store one).
    package static func needsSeed(_ c: CompiledRule) -> Bool {
        c.flags & ASPECTS_RULE_PROBABILITY.rawValue != 0 || !c.errnoChoices.isEmpty
            || c.actions & (ASPECTS_ACTION_CORRUPT.rawValue | ASPECTS_ACTION_SHORT.rawValue) != 0
    }
}

/// The errors of one rule, each naming it as its file's reader knows it (`rule 3`,
/// `rule "slow-disk"`), with the field, what is wrong and the fix.
struct RuleErrors {
    var label: String

    func callAsFunction(_ code: AspectsError.Code, _ field: String?, _ message: String, fix: String? = nil) -> AspectsError {
        AspectsError(code, rule: label, field: field, message, fix: fix)
    }
}
