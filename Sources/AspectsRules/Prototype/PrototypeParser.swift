/// Parses one C function declaration into a `CSignature`.
///
/// Accepts what headers and man pages write: qualifiers (`const`, `volatile`, `restrict`),
/// the integer types of C and of <stdint.h>/<stddef.h>/<sys/types.h>, `float`/`double`/`bool`,
/// pointers of any depth (opaque `struct x *` included), arrays as parameters, function-pointer
/// parameters, named or unnamed parameters and a trailing `...`.
package struct PrototypeParser: Sendable {
    /// A problem with a declaration, with the 1-based column where it was found.
    package struct Failure: Error, Equatable, Sendable, CustomStringConvertible {
        package var message: String
        package var column: Int
        package var description: String { "column \(column): \(message)" }
    }

    /// Named integer types (typedefs of the C library) and their ABI classes on LP64 Linux.
    package static let typedefs: [String: ABIType] = [
        "int8_t": .i8, "uint8_t": .u8, "int16_t": .i16, "uint16_t": .u16,
        "int32_t": .i32, "uint32_t": .u32, "int64_t": .i64, "uint64_t": .u64,
        "intptr_t": .i64, "uintptr_t": .u64, "intmax_t": .i64, "uintmax_t": .u64,
        "size_t": .u64, "ssize_t": .i64, "ptrdiff_t": .i64, "off_t": .i64, "off64_t": .i64,
        "loff_t": .i64, "mode_t": .u32, "pid_t": .i32, "uid_t": .u32, "gid_t": .u32, "id_t": .u32,
        "socklen_t": .u32, "sa_family_t": .u16, "in_port_t": .u16, "in_addr_t": .u32,
        "time_t": .i64, "suseconds_t": .i64, "useconds_t": .u32, "clockid_t": .i32,
        "dev_t": .u64, "ino_t": .u64, "ino64_t": .u64, "nlink_t": .u64, "blksize_t": .i64,
        "blkcnt_t": .i64, "nfds_t": .u64, "key_t": .i32, "idtype_t": .u32, "sigset_t": .pointer,
        "wchar_t": .i32, "wint_t": .u32, "sig_atomic_t": .i32, "rlim_t": .u64, "fsblkcnt_t": .u64,
        "fsfilcnt_t": .u64, "pthread_t": .u64, "timer_t": .pointer, "bool": .u8, "_Bool": .u8,
        "FILE": .pointer, "DIR": .pointer, "Lmid_t": .i64,
    ]

    private static let qualifiers: Set<String> = [
        "const", "volatile", "restrict", "__restrict", "__restrict__", "extern", "static", "inline",
        "__inline", "register", "__extension__",
    ]
    private static let builtinWords: Set<String> = [
        "void", "char", "short", "int", "long", "signed", "unsigned", "float", "double", "__int128",
    ]

    /// Structs the caller declared (`"types": {"struct pair": ["double", "double"]}`): those
    /// may be passed or returned by value.
    package var structs: Set<String> = []

    package init(structs: Set<String> = []) { self.structs = structs }

    package func parse(_ text: String) throws(Failure) -> CSignature {
        var lexer = Lexer(text)
        let tokens = try lexer.tokens()
        var cursor = Cursor(tokens: tokens, end: text.count + 1)
        let ret = try parseType(&cursor, allowVoid: true)
        guard case .identifier(let name) = cursor.peek.kind else {
            throw Failure(message: "expected the function name after '\(ret.spelling)'", column: cursor.peek.column)
        }
        cursor.advance()
        try cursor.expect(.punct("("), "expected '(' after the function name '\(name)'")
        var params: [CParameter] = []
        var variadic = false
        // `f(void)` and `f()` both mean no parameters.
        if case .identifier("void") = cursor.peek.kind, case .punct(")") = cursor.peek(1).kind {
            cursor.advance()
        } else if case .punct(")") = cursor.peek.kind {
        } else {
            while true {
                if case .ellipsis = cursor.peek.kind {
                    cursor.advance()
                    variadic = true
                    break
                }
                params.append(try parseParameter(&cursor, index: params.count))
                if case .punct(",") = cursor.peek.kind { cursor.advance(); continue }
                break
            }
        }
        try cursor.expect(.punct(")"), variadic ? "'...' must be the last parameter" : "expected ',' or ')' in the parameter list")
        if case .punct(";") = cursor.peek.kind { cursor.advance() }
        guard case .end = cursor.peek.kind else {
            throw Failure(message: "unexpected text after the declaration", column: cursor.peek.column)
        }
        var sig = CSignature(name: name, returnSpelling: ret.spelling, returnType: ret.type, parameters: params, isVariadic: variadic)
        if ret.type == .structure { sig.returnStructName = ret.spelling.replacingOccurrences(of: "const ", with: "") }
        return sig
    }

    /// Parses a type alone, e.g. the `mode_t` of a catalog `variadic:` line.
    package func parseType(_ text: String) throws(Failure) -> (spelling: String, type: ABIType, name: String?) {
        var lexer = Lexer(text)
        var cursor = Cursor(tokens: try lexer.tokens(), end: text.count + 1)
        let t = try parseType(&cursor, allowVoid: false)
        var name: String?
        if case .identifier(let n) = cursor.peek.kind { name = n; cursor.advance() }
        guard case .end = cursor.peek.kind else {
            throw Failure(message: "unexpected text after the type", column: cursor.peek.column)
        }
        return (t.spelling, t.type, name)
    }

    // MARK: - Grammar

    private func parseParameter(_ c: inout Cursor, index: Int) throws(Failure) -> CParameter {
        let startColumn = c.peek.column
        var t = try parseType(&c, allowVoid: false, parameterIndex: index)
        var name: String?
        // Function pointer: `void (*fn)(int)`.
        if case .punct("(") = c.peek.kind, case .punct("*") = c.peek(1).kind {
            c.advance(); c.advance()
            if case .identifier(let n) = c.peek.kind { name = n; c.advance() }
            try c.expect(.punct(")"), "expected ')' in the function-pointer parameter")
            try c.expect(.punct("("), "expected the parameter list of the function-pointer parameter")
            var depth = 1
            while depth > 0 {
                switch c.peek.kind {
                case .punct("("): depth += 1
                case .punct(")"): depth -= 1
                case .end: throw Failure(message: "unbalanced parentheses", column: c.peek.column)
                default: break
                }
                c.advance()
            }
            return CParameter(name: name, spelling: t.spelling + " (*)(...)", type: .pointer)
        }
        if case .identifier(let n) = c.peek.kind { name = n; c.advance() }
        // Array parameters decay to pointers: `char *const argv[]`, `int fds[2]`.
        while case .punct("[") = c.peek.kind {
            c.advance()
            while true {
                if case .punct("]") = c.peek.kind { break }
                if case .end = c.peek.kind { throw Failure(message: "expected ']'", column: c.peek.column) }
                c.advance()
            }
            c.advance()
            t = (t.spelling + "[]", .pointer)
        }
        if t.type == .void {
            throw Failure(message: "parameter \(index + 1) has type void", column: startColumn)
        }
        return CParameter(name: name, spelling: t.spelling, type: t.type,
                          structName: t.type == .structure ? t.spelling.replacingOccurrences(of: "const ", with: "") : nil)
    }

    private func parseType(_ c: inout Cursor, allowVoid: Bool, parameterIndex: Int? = nil) throws(Failure) -> (spelling: String, type: ABIType) {
        var words: [String] = []
        var isConst = false
        var named: (String, ABIType)?
        var structName: String?
        let column = c.peek.column
        loop: while case .identifier(let w) = c.peek.kind {
            if Self.qualifiers.contains(w) {
                if w == "const" { isConst = true }
                c.advance()
            } else if Self.builtinWords.contains(w) {
                if named != nil || structName != nil { break loop }
                words.append(w)
                c.advance()
            } else if w == "struct" || w == "union" || w == "enum" {
                c.advance()
                guard case .identifier(let tag) = c.peek.kind else {
                    throw Failure(message: "expected a tag name after '\(w)'", column: c.peek.column)
                }
                c.advance()
                structName = "\(w) \(tag)"
            } else if words.isEmpty && named == nil && structName == nil {
                guard let t = Self.typedefs[w] else {
                    // An unknown name in type position: a typedef we do not know.
                    let next = c.peek(1).kind
                    if case .punct("*") = next {
                        // `sqlite3_stmt *` — a pointer to an opaque type is fine.
                        named = (w, .pointer)
                        c.advance()
                        continue
                    }
                    throw Failure(message: "unknown type '\(w)': pass it by pointer, or use a type of <stdint.h>", column: c.peek.column)
                }
                named = (w, t)
                c.advance()
            } else {
                break loop
            }
        }
        var depth = 0
        while true {
            if case .punct("*") = c.peek.kind { depth += 1; c.advance(); continue }
            if case .identifier(let q) = c.peek.kind, Self.qualifiers.contains(q) { c.advance(); continue }
            break
        }
        let base: String
        var type: ABIType
        if let (n, t) = named {
            base = n
            type = t
        } else if let s = structName {
            base = s
            if s.hasPrefix("enum ") {
                type = .i32
            } else if depth == 0 {
                guard structs.contains(s) else {
                    throw Failure(message: "'\(s)' passed by value: declare its fields in the rule's \"types\"", column: column)
                }
                type = .structure
            } else {
                type = .pointer
            }
        } else if !words.isEmpty {
            base = words.joined(separator: " ")
            type = try builtin(words, column: column)
        } else {
            throw Failure(message: parameterIndex.map { "expected the type of parameter \($0 + 1)" } ?? "expected a type", column: column)
        }
        let spelledBase = (isConst ? "const " : "") + base
        if depth > 0 {
            let isChar = words == ["char"] || words == ["signed", "char"] || words == ["unsigned", "char"]
            type = (depth == 1 && isConst && isChar) ? .string : .pointer
            return (spelledBase + " " + String(repeating: "*", count: depth), type)
        }
        if type == .void && !allowVoid {
            throw Failure(message: "void is only allowed as a return type or as '(void)'", column: column)
        }
        return (spelledBase, type)
    }

    private func builtin(_ words: [String], column: Int) throws(Failure) -> ABIType {
        var unsigned = false, signed = false, longs = 0, short = false, char = false, int = false
        var void = false, float = false, double = false
        for w in words {
            switch w {
            case "unsigned": unsigned = true
            case "signed": signed = true
            case "long": longs += 1
            case "short": short = true
            case "char": char = true
            case "int": int = true
            case "void": void = true
            case "float": float = true
            case "double": double = true
            default: throw Failure(message: "unsupported type '\(w)'", column: column)
            }
        }
        let spelled = words.joined(separator: " ")
        if unsigned && signed { throw Failure(message: "'\(spelled)' is both signed and unsigned", column: column) }
        if void { guard words.count == 1 else { throw Failure(message: "invalid type '\(spelled)'", column: column) }; return .void }
        if float { guard words.count == 1 else { throw Failure(message: "invalid type '\(spelled)'", column: column) }; return .f32 }
        if double {
            guard words.count == 1 else {
                throw Failure(message: words.contains("long") ? "long double is not supported" : "invalid type '\(spelled)'", column: column)
            }
            return .f64
        }
        if char { guard !short && longs == 0 && !int else { throw Failure(message: "invalid type '\(spelled)'", column: column) }; return unsigned ? .u8 : .i8 }
        if short { guard longs == 0 else { throw Failure(message: "invalid type '\(spelled)'", column: column) }; return unsigned ? .u16 : .i16 }
        if longs > 2 { throw Failure(message: "invalid type '\(spelled)'", column: column) }
        if longs > 0 { return unsigned ? .u64 : .i64 }
        _ = int
        return unsigned ? .u32 : .i32
    }

    // MARK: - Lexing

    fileprivate enum Kind: Equatable {
        case identifier(String)
        case number
        case punct(Character)
        case ellipsis
        case end
    }

    fileprivate struct Token {
        var kind: Kind
        var column: Int
    }

    private struct Lexer {
        let chars: [Character]
        var i = 0
        init(_ text: String) { chars = Array(text) }

        // By byte value: Character's isLetter and isNumber look up Unicode properties, which
        // were most of the time of parsing a prototype.
        static func isIdentifierStart(_ c: Character) -> Bool {
            guard let v = c.asciiValue else { return false }
            return v == 0x5f || (0x41...0x5a).contains(v) || (0x61...0x7a).contains(v)
        }

        static func isDigit(_ c: Character) -> Bool { c.asciiValue.map { (0x30...0x39).contains($0) } ?? false }

        mutating func tokens() throws(Failure) -> [Token] {
            var out: [Token] = []
            while i < chars.count {
                let ch = chars[i]
                let column = i + 1
                if ch.asciiValue.map({ $0 == 0x20 || (0x09...0x0d).contains($0) }) ?? ch.isWhitespace { i += 1; continue }
                if ch == "/" && i + 1 < chars.count && chars[i + 1] == "*" {
                    // A comment, as man pages write `... /* mode_t mode */`.
                    guard let close = findCommentEnd(from: i + 2) else {
                        throw Failure(message: "unterminated comment", column: column)
                    }
                    i = close
                    continue
                }
                // C's identifiers and numbers are ASCII. (A digit with a combining mark is one
                // Character that isNumber but not isHexDigit: the number loop never moved, and
                // the tokenizer spun for ever — found by Fuzz/run.sh prototype.)
                if Self.isIdentifierStart(ch) {
                    var j = i + 1
                    while j < chars.count && (Self.isIdentifierStart(chars[j]) || Self.isDigit(chars[j])) { j += 1 }
                    out.append(Token(kind: .identifier(String(chars[i..<j])), column: column))
                    i = j
                } else if Self.isDigit(ch) {
                    var j = i + 1
                    while j < chars.count && (chars[j].isHexDigit || chars[j] == "x" || chars[j] == "X") { j += 1 }
                    out.append(Token(kind: .number, column: column))
                    i = j
                } else if ch == "." {
                    guard i + 2 < chars.count, chars[i + 1] == ".", chars[i + 2] == "." else {
                        throw Failure(message: "unexpected '.'", column: column)
                    }
                    out.append(Token(kind: .ellipsis, column: column))
                    i += 3
                } else if "()*,[];".contains(ch) {
                    out.append(Token(kind: .punct(ch), column: column))
                    i += 1
                } else {
                    throw Failure(message: "unexpected character '\(ch)'", column: column)
                }
            }
            return out
        }

        private func findCommentEnd(from start: Int) -> Int? {
            var j = start
            while j + 1 < chars.count {
                if chars[j] == "*" && chars[j + 1] == "/" { return j + 2 }
                j += 1
            }
            return nil
        }
    }

    private struct Cursor {
        let tokens: [Token]
        let end: Int
        var index = 0

        var peek: Token { peek(0) }
        func peek(_ ahead: Int) -> Token {
            index + ahead < tokens.count ? tokens[index + ahead] : Token(kind: .end, column: end)
        }
        mutating func advance() { index += 1 }
        mutating func expect(_ kind: Kind, _ message: String) throws(Failure) {
            guard peek.kind == kind else { throw Failure(message: message, column: peek.column) }
            advance()
        }
    }
}
