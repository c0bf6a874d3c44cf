import AspectsCore

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
package struct InjectTerm: Sendable {
    package let text: String
    /// Where the term came from, for errors: `--inject`, `--inject #2`.
    package let source: String

    package init(_ text: String, source: String = "--inject") {
        self.text = text
        self.source = source
    }

    /// The term as a rule object (JSON), before the rule is validated like any other; the
    /// catalog tells which argument a path pattern applies to (the first string argument).
    package func json(catalog: Catalog = .builtIn) throws(AspectsError) -> JSONNode.Value {
        try parse(catalog: catalog).value
    }

    /// The term as a rule, decoded and checked against the catalog as a rules file's rule is;
    /// an error names the column of the part of the term it is about, not the JSON's.
    package func rule(catalog: Catalog = .builtIn) throws(AspectsError) -> Rule {
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

    /// The term as a rule object, and where each part of it went (InjectTermParser).
    func parse(catalog: Catalog) throws(AspectsError) -> (value: JSONNode.Value, places: [Place]) {
        var parser = InjectTermParser(term: self, catalog: catalog)
        return try parser.parse()
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
