/// One rule in strace's `-e inject=` syntax, for catalog functions:
///
///     FUNC[,FUNC...][(PATH-GLOB)]:error=ERRNO|retval=N[:signal=SIG][:delay_enter=D][:delay_exit=D]
///         [:when=N|N+|N+STEP|N..M][:p=P][:seed=S][:once=process|hierarchy][:autoremove][:id=ID]
///
/// `write:error=ENOSPC:when=3` is `{"symbol": "write", "position": "instead", "action":
/// {"fail": "ENOSPC"}, "when": {"nth": 3}}`. A term is one JSON rule, decoded and checked like
/// any other; errors point at the column of the term where the problem is.
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
        let chars = Array(text)
        var pos = 0
        func fail(_ column: Int, _ message: String, fix: String? = nil) -> AspectsError {
            AspectsError(.invalidValue, location: "\(source):1:\(column + 1)", "\(message) in \"\(text)\"", fix: fix)
        }
        // FUNC[,FUNC...]
        var names: [String] = []
        var start = pos
        while pos < chars.count, chars[pos] != ":", chars[pos] != "(" {
            if chars[pos] == "," {
                names.append(String(chars[start..<pos]))
                start = pos + 1
            }
            pos += 1
        }
        names.append(String(chars[start..<pos]))
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
        for s in settings {
            guard seen.insert(s.key).inserted else { throw fail(s.column, "\"\(s.key)\" is given twice") }
            func value() throws(AspectsError) -> String {
                guard let v = s.value, !v.isEmpty else { throw fail(s.column, "\"\(s.key)\" needs a value (\(s.key)=...)") }
                return v
            }
            switch s.key {
            case "error":
                action.append(("fail", .string(try value())))
                changesResult = true
            case "retval":
                let v = try value()
                guard Int64(v) != nil || UInt64(v) != nil else { throw fail(s.column, "retval takes an integer, not \"\(v)\"") }
                action.append(("return", .number(v)))
                changesResult = true
            case "signal":
                action.append(("signal", .string(try value())))
            case "delay_enter": delayEnter = try Self.duration(try value(), column: s.column, fail: fail)
            case "delay_exit": delayExit = try Self.duration(try value(), column: s.column, fail: fail)
            case "when": when += try Self.when(try value(), column: s.column, fail: fail)
            case "p":
                let v = try value()
                guard let p = Double(v), p >= 0, p <= 1 else { throw fail(s.column, "p takes a probability from 0 to 1, not \"\(v)\"") }
                when.append(("probability", .number(v)))
                _ = p
            case "seed":
                let v = try value()
                guard UInt64(v) != nil else { throw fail(s.column, "seed takes a whole number, not \"\(v)\"") }
                when.append(("seed", .number(v)))
            case "once":
                let v = try value()
                guard v == "process" || v == "hierarchy" else { throw fail(s.column, "once is process or hierarchy, not \"\(v)\"") }
                extra.append(("once", .string(v)))
            case "autoremove":
                guard s.value == nil else { throw fail(s.column, "autoremove takes no value") }
                extra.append(("autoRemove", .bool(true)))
            case "id": id = try value()
            default:
                throw fail(s.column, "unknown setting \"\(s.key)\"",
                           fix: "use error=, retval=, signal=, delay_enter=, delay_exit=, when=, p=, seed=, once=, autoremove or id=")
            }
        }
        if delayEnter != nil && delayExit != nil && !changesResult {
            throw fail(0, "delay_enter and delay_exit together are two rules (one before, one after the call)", fix: "write two terms")
        }
        if let d = delayEnter ?? delayExit { action.append(("delay", .string(d))) }
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
        }
        var rule: [(String, JSONNode.Value?)] = []
        if let id { rule.append(("id", .string(id))) }
        rule.append(("symbol", names.count == 1 ? .string(names[0]) : JSONOut.array(names.map { .string($0) })))
        rule.append(("position", .string(position)))
        rule.append(("action", JSONOut.object(action)))
        if !when.isEmpty { rule.append(("when", JSONOut.object(when))) }
        rule += extra
        return JSONOut.object(rule)
    }

    /// strace's delays are microseconds unless a unit says otherwise.
    static func duration(_ v: String, column: Int, fail: (Int, String, String?) -> AspectsError) throws(AspectsError) -> String {
        if UInt64(v) != nil { return v + "us" }
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
            // the rule language's every counts from the first call: N must be a multiple of STEP
            guard n % step == 0 else {
                throw fail(column, "when=\(v) fires on calls \(n), \(n + step), ...; the rule language's every counts from the first call, so N+STEP needs N to be a multiple of STEP",
                           "e.g. when=\(step)+\(step) fires on calls \(step), \(2 * step), \(3 * step), ...")
            }
            return (n > step ? [("after", .number(String(n - step)))] : []) + [("every", .number(String(step)))]
        }
        return [("nth", .number(String(try number(Substring(v)))))]
    }
}
