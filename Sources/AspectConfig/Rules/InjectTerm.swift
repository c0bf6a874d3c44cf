/// One rule in strace's `-e inject=` syntax, for catalog functions:
///
///     FUNC[,FUNC...][(PATH-GLOB)]:error=ERRNO|retval=N[:signal=SIG][:delay_enter=D][:delay_exit=D]
///         [:when=N|N+|N+STEP|N..M][:p=P][:seed=S][:once=process|hierarchy][:autoremove][:id=ID]
///
/// `write:error=ENOSPC:when=3` is `{"symbol": "write", "position": "instead", "action":
/// {"fail": "ENOSPC"}, "when": {"nth": 3}}`. A term is one JSON rule, decoded and checked like
/// any other; every error, of the syntax or of the rule (an unknown function, errno or signal,
/// a combination the rule language refuses), points at the column of the term's part that
/// causes it. As in strace, ERRNO may be a number (`error=28` is ENOSPC) and SIG too.
public struct InjectTerm: Sendable {
    public let text: String
    /// Where the term came from, for errors: `--inject`, `--inject #2`.
    public let source: String

    public init(_ text: String, source: String = "--inject") {
        self.text = text
        self.source = source
    }

    /// The term as a rule object (JSON), before the rule is validated like any other; the
    /// catalog tells which argument a path pattern applies to (the first string argument).
    public func json(catalog: Catalog = .builtIn) throws(AspectsError) -> JSONNode.Value {
        try parse(catalog: catalog).value
    }

    /// The term as a rule, decoded and checked against the catalog as a rules file's rule is;
    /// an error names the column of the part of the term it is about, not the JSON's.
    public func rule(catalog: Catalog = .builtIn) throws(AspectsError) -> Rule {
        let (value, places) = try parse(catalog: catalog)
        do throws(AspectsError) {
            let rules = try RuleDecoder(source: source).decode(value.rendered())
            _ = try RuleCompiler(catalog: catalog).compile(rules)
            guard let rule = rules.first, rules.count == 1 else { throw AspectsError(.invalidValue, "the term is not one rule") }
            return rule
        } catch {
            throw locate(error, places)
        }
    }

    /// Where a part of the term went in the rule: the field path it became, the column it
    /// starts at (of its value, for key=value), and the key as written.
    struct Place {
        var field: String
        var column: Int
        var key: String?
        /// A function's name, to tell which of several an error is about.
        var name: String? = nil
    }

    /// A rule's error, moved from the JSON's field to the term's column: the most specific
    /// place whose field the error's lies under; for an unknown function of several, the one
    /// the message names.
    func locate(_ e: AspectsError, _ places: [Place]) -> AspectsError {
        var place = Place(field: "", column: 0, key: nil)
        if let field = e.field {
            let under = places.filter { field == $0.field || field.hasPrefix($0.field + ".") || field.hasPrefix($0.field + "[") }
            if let best = under.max(by: { $0.field.count < $1.field.count }) { place = best }
            if field == "symbol" || field.hasPrefix("symbol[") {
                let names = places.filter { $0.field.hasPrefix("symbol[") }
                if let named = names.first(where: { n in
                    let name = n.name ?? ""
                    return e.message.hasPrefix(name + " ") || e.message.hasPrefix("for \(name): ")
                }) { place = named }
            }
        }
        return AspectsError(e.code, field: place.key, location: "\(source):1:\(place.column + 1)", "\(e.message) in \"\(text)\"", fix: e.fix)
    }

    func parse(catalog: Catalog) throws(AspectsError) -> (value: JSONNode.Value, places: [Place]) {
        let chars = Array(text)
        var pos = 0
        func fail(_ column: Int, _ message: String, fix: String? = nil) -> AspectsError {
            AspectsError(.invalidValue, location: "\(source):1:\(column + 1)", "\(message) in \"\(text)\"", fix: fix)
        }
        // FUNC[,FUNC...]
        var names: [String] = []
        var places: [Place] = []
        var start = pos
        while pos < chars.count, chars[pos] != ":", chars[pos] != "(" {
            if chars[pos] == "," {
                places.append(Place(field: "symbol[\(names.count)]", column: start, key: nil, name: String(chars[start..<pos])))
                names.append(String(chars[start..<pos]))
                start = pos + 1
            }
            pos += 1
        }
        places.append(Place(field: "symbol[\(names.count)]", column: start, key: nil, name: String(chars[start..<pos])))
        names.append(String(chars[start..<pos]))
        // the rule's own fields that the function decides: which function it is, where it goes
        places.append(Place(field: "symbol", column: 0, key: nil))
        places.append(Place(field: "family", column: 0, key: nil))
        for n in names where n.isEmpty || !n.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) {
            throw fail(0, "\"\(n)\" is not a function name", fix: "start with the function: write:error=ENOSPC")
        }
        // (PATH-GLOB): the first string argument (a path, mostly) matches it
        var glob: String?
        if pos < chars.count, chars[pos] == "(" {
            let open = pos
            guard let close = chars[(pos + 1)...].firstIndex(of: ")") else { throw fail(open, "\"(\" is not closed", fix: "write open(*.db):error=EACCES") }
            glob = String(chars[(open + 1)..<close])
            if glob!.isEmpty { throw fail(open, "the path pattern is empty") }
            pos = close + 1
        }
        // :key=value or :flag, each with its column
        var settings: [(key: String, value: String?, column: Int)] = []
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
        var action: [(String, JSONNode.Value?)] = []
        var when: [(String, JSONNode.Value?)] = []
        var position = "instead"
        var changesResult = false
        var delayEnter: String?, delayExit: String?
        var extra: [(String, JSONNode.Value?)] = []
        var id: String?
        var seen = Set<String>()
        // the columns of the parts that make the action, in the order written
        var actionColumns: [(key: String, column: Int)] = []
        for s in settings {
            guard seen.insert(s.key).inserted else { throw fail(s.column, "\"\(s.key)\" is given twice") }
            func value() throws(AspectsError) -> String {
                guard let v = s.value, !v.isEmpty else { throw fail(s.column, "\"\(s.key)\" needs a value (\(s.key)=...)") }
                return v
            }
            let valueColumn = s.column + s.key.count + 1
            func place(_ field: String) { places.append(Place(field: field, column: valueColumn, key: s.key)) }
            switch s.key {
            case "error":
                let v = try value()
                // strace takes an errno's number too
                if let n = Int32(v) {
                    guard let name = ErrorNames.errnoName(n) else {
                        throw fail(valueColumn, "no errno has the number \(v)", fix: "write a name such as ENOSPC, or a number errno(3) lists (28 is ENOSPC)")
                    }
                    action.append(("fail", .string(name)))
                } else {
                    action.append(("fail", .string(v)))
                }
                changesResult = true
                place("action.fail")
                actionColumns.append((s.key, valueColumn))
            case "retval":
                let v = try value()
                guard Int64(v) != nil || UInt64(v) != nil else {
                    throw fail(s.column, RuleDecoder.outOfRange(v).map { "retval \(v) \($0)" } ?? "retval takes an integer, not \"\(v)\"")
                }
                action.append(("return", .number(v)))
                changesResult = true
                place("action.return")
                actionColumns.append((s.key, valueColumn))
            case "signal":
                let v = try value()
                // a number as strace takes it, written as its name when it has one
                action.append(("signal", .string(Int32(v).flatMap(ErrorNames.signalName) ?? v)))
                place("action.signal")
                actionColumns.append((s.key, valueColumn))
            case "delay_enter":
                delayEnter = try Self.duration(try value(), column: s.column, fail: fail)
                place("action.delay")
                actionColumns.append((s.key, valueColumn))
            case "delay_exit":
                delayExit = try Self.duration(try value(), column: s.column, fail: fail)
                if delayEnter == nil { place("action.delay") }
                actionColumns.append((s.key, valueColumn))
            case "when":
                when += try Self.when(try value(), column: s.column, fail: fail)
                for f in ["nth", "after", "every", "first", "times"] { place("when.\(f)") }
            case "p":
                let v = try value()
                guard let p = Double(v), p >= 0, p <= 1 else { throw fail(s.column, "p takes a probability from 0 to 1, not \"\(v)\"") }
                when.append(("probability", .number(v)))
                place("when.probability")
                _ = p
            case "seed":
                let v = try value()
                guard UInt64(v) != nil else { throw fail(s.column, "seed takes a whole number, not \"\(v)\"") }
                when.append(("seed", .number(v)))
                place("when.seed")
            case "once":
                let v = try value()
                guard v == "process" || v == "hierarchy" else { throw fail(s.column, "once is process or hierarchy, not \"\(v)\"") }
                extra.append(("once", .string(v)))
                place("once")
            case "autoremove":
                guard s.value == nil else { throw fail(s.column, "autoremove takes no value") }
                extra.append(("autoRemove", .bool(true)))
                places.append(Place(field: "autoRemove", column: s.column, key: s.key))
            case "id":
                id = try value()
                place("id")
            default:
                throw fail(s.column, "unknown setting \"\(s.key)\"",
                           fix: "use error=, retval=, signal=, delay_enter=, delay_exit=, when=, p=, seed=, once=, autoremove or id=")
            }
        }
        if let enter = delayEnter, let exit = delayExit {
            // Instead of the call, nothing runs between entry and exit: one delay of both is
            // exactly strace's. Around a call that runs, they are a before and an after rule.
            guard changesResult else {
                let exitColumn = actionColumns.first { $0.key == "delay_exit" }!.column
                let function = names.joined(separator: ",")
                throw fail(exitColumn, "delay_enter and delay_exit around a call that runs are two rules, one before the call and one after it, and a term is one rule",
                           fix: "write two terms: --inject '\(function):delay_enter=\(enter)' --inject '\(function):delay_exit=\(exit)' (with error= or retval= they are one delay)")
            }
            action.append(("delay", .string(Self.format(nanoseconds: (RuleDecoder.parseDuration(enter) ?? 0) &+ (RuleDecoder.parseDuration(exit) ?? 0)))))
        } else if let d = delayEnter ?? delayExit {
            action.append(("delay", .string(d)))
        }
        // A refused combination of the action is the later part's fault; the position the
        // first result-changing part's (it made the rule an instead rule).
        let results = actionColumns.filter { $0.key == "error" || $0.key == "retval" }
        if let last = (results.count > 1 ? results.last : actionColumns.first) {
            places.append(Place(field: "action", column: last.column, key: last.key))
        }
        if let first = results.first ?? actionColumns.first {
            places.append(Place(field: "position", column: first.column, key: first.key))
        }
        if !changesResult {
            // no result of its own: the call goes on (before), or is held after it (delay_exit)
            position = delayExit != nil ? "after" : "before"
            if action.isEmpty { throw fail(0, "nothing to inject", fix: "add error=ERRNO, retval=N, signal=SIG or a delay") }
        }
        if let glob {
            let column = text.distance(from: text.startIndex, to: text.firstIndex(of: "(")!)
            guard let f = catalog.function(named: names[0]) else { throw fail(0, "\(names[0]) is not in the catalog") }
            guard let arg = catalog.primary(of: catalog.group(of: f)).signature.parameters.firstIndex(where: { $0.type == .string }) else {
                throw fail(column, "\(names[0]) takes no path (no string argument) for \"(\(glob))\" to match")
            }
            when.append(("args", JSONOut.array([JSONOut.object([("arg", .number(String(arg))), ("glob", .string(glob))])])))
            places.append(Place(field: "when.args", column: column + 1, key: nil))
        }
        var rule: [(String, JSONNode.Value?)] = []
        if let id { rule.append(("id", .string(id))) }
        rule.append(("symbol", names.count == 1 ? .string(names[0]) : JSONOut.array(names.map { .string($0) })))
        rule.append(("position", .string(position)))
        rule.append(("action", JSONOut.object(action)))
        if !when.isEmpty { rule.append(("when", JSONOut.object(when))) }
        rule += extra
        return (JSONOut.object(rule), places)
    }

    /// A duration the rule language reads back exactly: in the largest unit that divides it.
    static func format(nanoseconds ns: UInt64) -> String {
        for (unit, scale) in [("s", UInt64(1_000_000_000)), ("ms", 1_000_000), ("us", 1_000)] where ns % scale == 0 && ns > 0 {
            return "\(ns / scale)\(unit)"
        }
        return "\(ns)ns"
    }

    /// strace's delays are microseconds unless a unit says otherwise.
    static func duration(_ v: String, column: Int, fail: (Int, String, String?) -> AspectsError) throws(AspectsError) -> String {
        if UInt64(v) != nil { return v + "us" }
        // Digits too many for 64 bits, with or without a unit: a delay, but far too long.
        let digitsOnly = { (t: Substring) in !t.isEmpty && t.allSatisfy { $0.isASCII && $0.isNumber } && UInt64(t) == nil }
        if digitsOnly(Substring(v)) || ["ns", "us", "ms", "s"].contains(where: { v.hasSuffix($0) && digitsOnly(v.dropLast($0.count)) }) {
            throw fail(column, "\"\(v)\" is longer than an hour", "use a delay of at most 3600s")
        }
        guard ["ns", "us", "ms", "s"].contains(where: { v.hasSuffix($0) && UInt64(v.dropLast($0.count)) != nil }) else {
            throw fail(column, "\"\(v)\" is not a delay", "write microseconds (500) or a number with ns, us, ms or s")
        }
        return v
    }

    /// when=N (the Nth call), N+ (from the Nth on), N+STEP (every STEPth from the Nth), N..M.
    static func when(_ v: String, column: Int, fail: (Int, String, String?) -> AspectsError) throws(AspectsError) -> [(String, JSONNode.Value?)] {
        func number(_ s: Substring) throws(AspectsError) -> UInt64 {
            guard let n = UInt64(s), n > 0 else { throw fail(column, "\"\(s)\" in when=\(v) is not a call number (1 or more)", nil) }
            return n
        }
        if let dots = v.range(of: "..") {
            let n = try number(v[..<dots.lowerBound]), m = try number(v[dots.upperBound...])
            guard n <= m else { throw fail(column, "when=\(v) ends before it starts", nil) }
            return [("after", .number(String(n - 1))), ("times", .number(String(m - n + 1)))].filter { $0.0 != "after" || n > 1 }
        }
        if let plus = v.firstIndex(of: "+") {
            let n = try number(v[..<plus])
            let rest = v[v.index(after: plus)...]
            if rest.isEmpty { return n > 1 ? [("after", .number(String(n - 1)))] : [] }
            let step = try number(rest)
            // calls N, N+STEP, ...: `every` STEP starting at `first` N (the multiples of STEP
            // when N is STEP itself)
            return [("every", .number(String(step)))] + (n != step ? [("first", .number(String(n)))] : [])
        }
        return [("nth", .number(String(try number(Substring(v)))))]
    }
}
