import AspectsCore

/// Reads one `--inject` term (InjectTerm) into a rule object, part by part, in the order the
/// term is written: the functions, a path pattern, the settings; then what the settings make
/// together (one delay, the position, where an error about the action or position points).
/// Every part records the field it became and its column (`places`), so that an error of the
/// rule points at the term.
struct InjectTermParser {
    typealias Place = InjectTerm.Place
    /// One `:key=value` (or `:flag`) of the term, at the column of its key.
    typealias Setting = (key: String, value: String?, column: Int)
    let term: InjectTerm
    let catalog: Catalog
    private let chars: [Character]
    private var pos = 0
    private var places: [Place] = []

    // what the settings make
    private var names: [String] = []
    private var glob: String?
    private var action: [(String, JSONNode.Value?)] = []
    private var when: [(String, JSONNode.Value?)] = []
    private var extra: [(String, JSONNode.Value?)] = []
    private var id: String?
    private var changesResult = false
    private var delayEnter: String?, delayExit: String?
    /// The columns of the parts that make the action, in the order written.
    private var actionColumns: [(key: String, column: Int)] = []

    init(term: InjectTerm, catalog: Catalog) {
        self.term = term
        self.catalog = catalog
        chars = Array(term.text)
    }

    mutating func parse() throws(AspectsError) -> (value: JSONNode.Value, places: [Place]) {
        try readFunctions()
        try readPathPattern()
        var seen = Set<String>()
        for s in try readSettings() {
            guard seen.insert(s.key).inserted else { throw fail(s.column, "\"\(s.key)\" is given twice") }
            try apply(s)
        }
        try combineDelays()
        placeActionAndPosition()
        let position = try position()
        try addPathCondition()
        var rule: [(String, JSONNode.Value?)] = []
        if let id { rule.append(("id", .string(id))) }
        rule.append(("symbol", names.count == 1 ? .string(names[0]) : JSONOut.array(names.map { .string($0) })))
        rule.append(("position", .string(position)))
        rule.append(("action", JSONOut.object(action)))
        if !when.isEmpty { rule.append(("when", JSONOut.object(when))) }
        rule += extra
        return (JSONOut.object(rule), places)
    }

    private func fail(_ column: Int, _ message: String, fix: String? = nil) -> AspectsError {
        AspectsError(.invalidValue, location: "\(term.source):1:\(column + 1)", "\(message) in \"\(term.text)\"", fix: fix)
    }

    /// FUNC[,FUNC...], up to the first ':' or '('.
    private mutating func readFunctions() throws(AspectsError) {
        var start = pos
        while pos < chars.count, chars[pos] != ":", chars[pos] != "(" {
            if chars[pos] == "," {
                addFunction(from: start)
                start = pos + 1
            }
            pos += 1
        }
        addFunction(from: start)
        // the rule's own fields that the function decides: which function it is, where it goes
        places.append(Place(field: "symbol", column: 0, key: nil))
        places.append(Place(field: "family", column: 0, key: nil))
        for n in names where n.isEmpty || !n.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) {
            throw fail(0, "\"\(n)\" is not a function name", fix: "start with the function: write:error=ENOSPC")
        }
    }

    private mutating func addFunction(from start: Int) {
        let name = String(chars[start..<pos])
        places.append(Place(field: "symbol[\(names.count)]", column: start, key: nil, name: name))
        names.append(name)
    }

    /// (PATH-GLOB): the first string argument (a path, mostly) matches it.
    private mutating func readPathPattern() throws(AspectsError) {
        guard pos < chars.count, chars[pos] == "(" else { return }
        let open = pos
        guard let close = chars[(pos + 1)...].firstIndex(of: ")") else { throw fail(open, "\"(\" is not closed", fix: "write open(*.db):error=EACCES") }
        glob = String(chars[(open + 1)..<close])
        if glob!.isEmpty { throw fail(open, "the path pattern is empty") }
        pos = close + 1
    }

    /// :key=value or :flag, each with its column.
    private mutating func readSettings() throws(AspectsError) -> [Setting] {
        var settings: [Setting] = []
        while pos < chars.count {
            guard chars[pos] == ":" else { throw fail(pos, "expected \":\" before the next setting") }
            pos += 1
            let column = pos
            var end = pos
            while end < chars.count, chars[end] != ":" { end += 1 }
            let item = String(chars[pos..<end])
            if let eq = item.firstIndex(of: "=") {
                settings.append((String(item[..<eq]), String(item[item.index(after: eq)...]), column))
            } else {
                settings.append((item, nil, column))
            }
            pos = end
        }
        return settings
    }

    /// One setting into the action, the conditions or the rule's other fields.
    private mutating func apply(_ s: Setting) throws(AspectsError) {
        switch s.key {
        case "error", "retval", "signal", "delay_enter", "delay_exit": try applyToAction(s)
        case "when", "p", "seed": try applyToConditions(s)
        case "once", "autoremove", "id": try applyToRule(s)
        default:
            throw fail(s.column, "unknown setting \"\(s.key)\"",
                       fix: "use error=, retval=, signal=, delay_enter=, delay_exit=, when=, p=, seed=, once=, autoremove or id=")
        }
    }

    /// error=, retval=, signal=, delay_enter=, delay_exit=: a part of the action.
    private mutating func applyToAction(_ s: Setting) throws(AspectsError) {
        switch s.key {
        case "error":
            action.append(("fail", .string(try errnoName(try value(of: s), column: valueColumn(of: s)))))
            changesResult = true
            placeActionPart("action.fail", of: s)
        case "retval":
            let v = try value(of: s)
            guard Int64(v) != nil || UInt64(v) != nil else {
                throw fail(s.column, RuleDecoder.outOfRange(v).map { "retval \(v) \($0)" } ?? "retval takes an integer, not \"\(v)\"")
            }
            action.append(("return", .number(v)))
            changesResult = true
            placeActionPart("action.return", of: s)
        case "signal":
            let v = try value(of: s)
            // a number as strace takes it, written as its name when it has one
            action.append(("signal", .string(Int32(v).flatMap(ErrorNames.signalName) ?? v)))
            placeActionPart("action.signal", of: s)
        case "delay_enter":
            delayEnter = try InjectTerm.duration(try value(of: s), column: s.column, fail: fail)
            placeActionPart("action.delay", of: s)
        default: // delay_exit
            delayExit = try InjectTerm.duration(try value(of: s), column: s.column, fail: fail)
            if delayEnter == nil { place("action.delay", of: s) }
            actionColumns.append((s.key, valueColumn(of: s)))
        }
    }

    /// when=, p=, seed=: conditions.
    private mutating func applyToConditions(_ s: Setting) throws(AspectsError) {
        switch s.key {
        case "when":
            when += try InjectTerm.when(try value(of: s), column: s.column, fail: fail)
            for f in ["nth", "after", "every", "first", "times"] { place("when.\(f)", of: s) }
        case "p":
            let v = try value(of: s)
            guard let p = Double(v), p >= 0, p <= 1 else { throw fail(s.column, "p takes a probability from 0 to 1, not \"\(v)\"") }
            when.append(("probability", .number(v)))
            place("when.probability", of: s)
        default: // seed
            let v = try value(of: s)
            guard UInt64(v) != nil else { throw fail(s.column, "seed takes a whole number, not \"\(v)\"") }
            when.append(("seed", .number(v)))
            place("when.seed", of: s)
        }
    }

    /// once=, autoremove, id=: the rule's own fields.
    private mutating func applyToRule(_ s: Setting) throws(AspectsError) {
        switch s.key {
        case "once":
            let v = try value(of: s)
            guard v == "process" || v == "hierarchy" else { throw fail(s.column, "once is process or hierarchy, not \"\(v)\"") }
            extra.append(("once", .string(v)))
            place("once", of: s)
        case "autoremove":
            guard s.value == nil else { throw fail(s.column, "autoremove takes no value") }
            extra.append(("autoRemove", .bool(true)))
            places.append(Place(field: "autoRemove", column: s.column, key: s.key))
        default: // id
            id = try value(of: s)
            place("id", of: s)
        }
    }

    /// The value of a key=value setting; a setting without one is an error.
    private func value(of s: Setting) throws(AspectsError) -> String {
        guard let v = s.value, !v.isEmpty else { throw fail(s.column, "\"\(s.key)\" needs a value (\(s.key)=...)") }
        return v
    }

    private func valueColumn(of s: Setting) -> Int { s.column + s.key.count + 1 }

    /// The field a setting became, at its value's column.
    private mutating func place(_ field: String, of s: Setting) {
        places.append(Place(field: field, column: valueColumn(of: s), key: s.key))
    }

    /// A part of the action: its field, and its column among the action's parts.
    private mutating func placeActionPart(_ field: String, of s: Setting) {
        place(field, of: s)
        actionColumns.append((s.key, valueColumn(of: s)))
    }

    /// strace takes an errno's number too: written as its name.
    private func errnoName(_ v: String, column: Int) throws(AspectsError) -> String {
        guard let n = Int32(v) else { return v }
        guard let name = ErrorNames.errnoName(n) else {
            throw fail(column, "no errno has the number \(v)", fix: "write a name such as ENOSPC, or a number errno(3) lists (28 is ENOSPC)")
        }
        return name
    }

    /// delay_enter and delay_exit as the rule's one delay.
    private mutating func combineDelays() throws(AspectsError) {
        if let enter = delayEnter, let exit = delayExit {
            // Instead of the call, nothing runs between entry and exit: one delay of both is
            // exactly strace's. Around a call that runs, they are a before and an after rule.
            guard changesResult else {
                let exitColumn = actionColumns.first { $0.key == "delay_exit" }!.column
                let function = names.joined(separator: ",")
                throw fail(exitColumn, "delay_enter and delay_exit around a call that runs are two rules, one before the call and one after it, and a term is one rule",
                           fix: "write two terms: --inject '\(function):delay_enter=\(enter)' --inject '\(function):delay_exit=\(exit)' (with error= or retval= they are one delay)")
            }
            action.append(("delay", .string(InjectTerm.format(nanoseconds: (RuleDecoder.parseDuration(enter) ?? 0) &+ (RuleDecoder.parseDuration(exit) ?? 0)))))
        } else if let d = delayEnter ?? delayExit {
            action.append(("delay", .string(d)))
        }
    }

    /// A refused combination of the action is the later part's fault; the position the first
    /// result-changing part's (it made the rule an instead rule).
    private mutating func placeActionAndPosition() {
        let results = actionColumns.filter { $0.key == "error" || $0.key == "retval" }
        if let last = (results.count > 1 ? results.last : actionColumns.first) {
            places.append(Place(field: "action", column: last.column, key: last.key))
        }
        if let first = results.first ?? actionColumns.first {
            places.append(Place(field: "position", column: first.column, key: first.key))
        }
    }

    /// instead when the term gives a result — after for an error= alone on functions the
    /// catalog fails after their work (close, fclose, fsync), where their failure happens —;
    /// else the call goes on (before), or is held after it (delay_exit).
    private func position() throws(AspectsError) -> String {
        if changesResult {
            let failsAfter = !names.isEmpty && names.allSatisfy { n in catalog.function(named: n).map { catalog.group(of: $0).failurePosition == .after } ?? false }
            return failsAfter && !action.contains(where: { $0.0 == "return" }) ? "after" : "instead"
        }
        if action.isEmpty { throw fail(0, "nothing to inject", fix: "add error=ERRNO, retval=N, signal=SIG or a delay") }
        return delayExit != nil ? "after" : "before"
    }

    /// The path pattern as a condition on the function's first string argument.
    private mutating func addPathCondition() throws(AspectsError) {
        guard let glob else { return }
        let column = term.text.distance(from: term.text.startIndex, to: term.text.firstIndex(of: "(")!)
        guard let f = catalog.function(named: names[0]) else { throw fail(0, "\(names[0]) is not in the catalog") }
        guard let arg = catalog.primary(of: catalog.group(of: f)).signature.parameters.firstIndex(where: { $0.type == .string }) else {
            throw fail(column, "\(names[0]) takes no path (no string argument) for \"(\(glob))\" to match")
        }
        when.append(("args", JSONOut.array([JSONOut.object([("arg", .number(String(arg))), ("glob", .string(glob))])])))
        places.append(Place(field: "when.args", column: column + 1, key: nil))
    }
}
