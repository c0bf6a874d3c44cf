import Foundation
import AspectsCore
import AspectsRules

/// Parses `config/catalog.spec`, the one source of the catalog (libfiu's readable shape):
///
///     [file]
///     ssize_t write(int fd, const void *buf, size_t count)
///         header: unistd.h
///         aliases: __write                     same prototype, same group
///         also: ssize_t __write_chk(...)       another entry point of the same group
///         variadic: mode_t mode                the optional argument a variadic one forwards
///         failure: -1 errno                    see FailureStyle
///         errnos: ENOSPC EIO EBADF ...         what the man page allows
///         default: ENOSPC                      what `"fail": true` picks, or by descriptor:
///         default: file=ENOSPC pipe=EPIPE socket=ECONNRESET
///         flags: noreturn
///         fails: after: REASON              it fails after acting (close, fsync): see Catalog
///         fails: stream: read|write         a stdio function: its stream's read(2)/write(2) fails
///
///         flagargs: flags=open              an argument whose flags have names (below)
///
///     [flagsets]
///     open: O_RDONLY=0 O_CREAT=0x40 ...
///
///     [refused]
///     dlsym: the preload resolves every original with it
package struct CatalogParser: Sendable {
    package struct Failure: Error, CustomStringConvertible, Equatable {
        package var line: Int
        package var message: String
        package var description: String { "catalog.spec:\(line): \(message)" }
    }

    package init() {}

    private struct PendingGroup {
        var line: Int
        var section: String
        var primary: CSignature
        var header = ""
        var aliases: [String] = []
        var also: [(CSignature, Int)] = []
        var variadic: [CParameter] = []
        var test: String?
        var failure: FailureStyle?
        var errnos: [String] = []
        var defaultErrno: String?
        var noReturn = false
        var signalUnsafe = false
        var flagArgs: [(String, String)] = []
        var data: [String] = []
        var faults: [String] = []
        var failsAfterReason: String?
        var stream: StreamIO?
        var standardStream: String?
        var defaultByKind: [DescriptorKind: String] = [:]
    }

    package func parse(_ text: String) throws(Failure) -> Catalog {
        var section = ""
        var pending: [PendingGroup] = []
        var refused: [RefusedSymbol] = []
        var flagSets: [String: FlagSet] = [:]
        var families: [(name: String, members: [String], line: Int)] = []
        let parser = PrototypeParser()
        // Lines and comments cut by byte ('\n', '#'): splitting the whole text by Character
        // (grapheme breaking) was most of the parse.
        for (i, raw) in text.utf8.split(separator: 0x0a, omittingEmptySubsequences: false).enumerated() {
            let lineNo = i + 1
            let code = raw.firstIndex(of: 0x23).map { raw[..<$0] } ?? raw[...]
            let trimmed = Substring(code).trimmingSpaces
            if trimmed.isEmpty { continue }
            if trimmed.hasPrefix("[") {
                guard trimmed.hasSuffix("]") else { throw Failure(line: lineNo, message: "a section is written [name]") }
                section = String(trimmed.dropFirst().dropLast())
                continue
            }
            if section == "families" {
                guard let colon = trimmed.firstIndex(of: ":") else {
                    throw Failure(line: lineNo, message: "a family is written 'name: function function ...'")
                }
                let name = String(trimmed[..<colon]).trimmingSpaces
                let members = trimmed[trimmed.index(after: colon)...].split(separator: " ").map(String.init)
                guard !name.isEmpty, members.count >= 2 else { throw Failure(line: lineNo, message: "a family has a name and two or more functions") }
                families.append((name, members, lineNo))
                continue
            }
            if section == "flagsets" {
                guard let colon = trimmed.firstIndex(of: ":") else {
                    throw Failure(line: lineNo, message: "a flag set is written 'name: FLAG=value ...'")
                }
                // "name", "name field=MASK" or "name values"
                let head = trimmed[..<colon].split(separator: " ").map(String.init)
                guard let name = head.first else { throw Failure(line: lineNo, message: "a flag set needs a name before ':'") }
                var set = FlagSet(name: name, flags: [])
                for word in head.dropFirst() {
                    if word == "values" { set.kind = .values }
                    else if word.hasPrefix("field="), let mask = Self.cNumber(String(word.dropFirst(6))) { set.kind = .bits(field: mask) }
                    else { throw Failure(line: lineNo, message: "'\(word)' is neither 'values' nor 'field=MASK'") }
                }
                for item in trimmed[trimmed.index(after: colon)...].split(separator: " ") {
                    let parts = item.split(separator: "=", maxSplits: 1).map(String.init)
                    guard parts.count == 2, let v = Self.cNumber(parts[1]) else {
                        throw Failure(line: lineNo, message: "'\(item)' is not FLAG=value")
                    }
                    set.flags.append((parts[0], v))
                }
                flagSets[name] = set
                continue
            }
            if section == "refused" {
                guard let colon = trimmed.firstIndex(of: ":") else {
                    throw Failure(line: lineNo, message: "a refused symbol is written 'name: reason'")
                }
                refused.append(RefusedSymbol(name: String(trimmed[..<colon]).trimmingSpaces,
                                             reason: String(trimmed[trimmed.index(after: colon)...]).trimmingSpaces))
                continue
            }
            let indented = code.first == 0x20 || code.first == 0x09
            if !indented {
                guard !section.isEmpty else { throw Failure(line: lineNo, message: "a function before any [section]") }
                do {
                    pending.append(PendingGroup(line: lineNo, section: section, primary: try parser.parse(trimmed)))
                } catch {
                    throw Failure(line: lineNo, message: "bad prototype: \(error)")
                }
                continue
            }
            guard !pending.isEmpty else { throw Failure(line: lineNo, message: "a property before any function") }
            guard let colon = trimmed.firstIndex(of: ":") else {
                throw Failure(line: lineNo, message: "a property is written 'key: value'")
            }
            let key = String(trimmed[..<colon])
            let value = String(trimmed[trimmed.index(after: colon)...]).trimmingSpaces
            let words = value.split(separator: " ").map(String.init)
            var g = pending.removeLast()
            switch key {
            case "header": g.header = value
            case "aliases": g.aliases += words
            case "also":
                do { g.also.append((try parser.parse(value), lineNo)) } catch {
                    throw Failure(line: lineNo, message: "bad prototype: \(error)")
                }
            case "variadic":
                guard g.primary.isVariadic else { throw Failure(line: lineNo, message: "'variadic:' on a prototype without '...'") }
                for part in value.split(separator: ",") {
                    do {
                        let t = try parser.parseType(part.trimmingSpaces)
                        g.variadic.append(CParameter(name: t.name, spelling: t.spelling, type: t.type))
                    } catch {
                        throw Failure(line: lineNo, message: "bad variadic type: \(error)")
                    }
                }
            case "test":
                g.test = value == "none" ? nil : value
            case "failure":
                guard let style = FailureStyle(rawValue: value) else {
                    throw Failure(line: lineNo, message: "unknown failure style '\(value)'; one of: \(FailureStyle.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                g.failure = style
            case "errnos": g.errnos += words
            case "default":
                if !value.contains("=") { g.defaultErrno = value; break }
                for w in words {
                    let parts = w.split(separator: "=", maxSplits: 1).map(String.init)
                    guard parts.count == 2, let kind = DescriptorKind(rawValue: parts[0]) else {
                        throw Failure(line: lineNo, message: "'\(w)' is not KIND=ERRNO with a kind of: \(DescriptorKind.allCases.map(\.rawValue).joined(separator: ", "))")
                    }
                    g.defaultByKind[kind] = parts[1]
                }
                guard let file = g.defaultByKind[.file] else {
                    throw Failure(line: lineNo, message: "a 'default:' by descriptor kind names 'file=' (regular files and every kind not named)")
                }
                g.defaultErrno = file
            case "flagargs":
                for w in words {
                    let parts = w.split(separator: "=").map(String.init)
                    guard parts.count == 2 else { throw Failure(line: lineNo, message: "flagargs are written param=set") }
                    g.flagArgs.append((parts[0], parts[1]))
                }
            case "flags":
                for w in words {
                    switch w {
                    case "noreturn": g.noReturn = true
                    case "signal-unsafe": g.signalUnsafe = true
                    default: throw Failure(line: lineNo, message: "unknown flag '\(w)'")
                    }
                }
            case "data":
                guard (2...3).contains(words.count) else {
                    throw Failure(line: lineNo, message: "'data:' names the buffer, the count and (for items) the item size: 'data: buf count [size]'")
                }
                g.data = words
            case "fails":
                if value.hasPrefix("stream:") {
                    // read|write, then the standard stream of a function that takes none (puts)
                    let parts = value.dropFirst(7).split(separator: " ").map(String.init)
                    guard let io = parts.first.flatMap(StreamIO.init(rawValue:)), parts.count <= 2,
                          parts.count == 1 || parts[1] == "stdin" || parts[1] == "stdout" else {
                        throw Failure(line: lineNo, message: "'fails: stream:' is followed by read or write (the system call the stream makes) and, for a function without a FILE * argument, stdin or stdout")
                    }
                    g.stream = io
                    g.standardStream = parts.count == 2 ? parts[1] : nil
                    break
                }
                guard value.hasPrefix("after:"), case let reason = value.dropFirst(6).trimmingSpaces, !reason.isEmpty else {
                    throw Failure(line: lineNo, message: "'fails:' is written 'fails: after: REASON' (why the failure comes after the work) or 'fails: stream: read|write'; leave it out for a function that fails without acting")
                }
                g.failsAfterReason = reason
            case "faults":
                for w in words where DataFault(rawValue: w) == nil {
                    throw Failure(line: lineNo, message: "unknown data fault '\(w)'; one of: \(DataFault.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                g.faults = words
            default:
                throw Failure(line: lineNo, message: "unknown property '\(key)'")
            }
            pending.append(g)
        }
        var catalog = try build(pending, refused: refused, flagSets: flagSets)
        for f in families {
            for m in f.members where catalog.function(named: m) == nil {
                throw Failure(line: f.line, message: "family '\(f.name)': '\(m)' is not in the catalog")
            }
            catalog.families[f.name] = f.members
        }
        return catalog
    }

    /// `data: buf count [size]`: the named parameters, checked for their kinds (a pointer, then
    /// integers), as indices in the primary prototype (which rules and the table speak of).
    private func dataArguments(_ g: PendingGroup, primary: CSignature) throws(Failure) -> DataArguments? {
        guard !g.data.isEmpty else { return nil }
        var indices: [Int] = []
        for (k, name) in g.data.enumerated() {
            guard let i = primary.parameters.firstIndex(where: { $0.name == name }) else {
                throw Failure(line: g.line, message: "'data:' of '\(primary.name)': it has no parameter '\(name)'")
            }
            let type = primary.parameters[i].type
            guard k == 0 ? type.isPointer : type.isInteger else {
                throw Failure(line: g.line, message: "'data:' of '\(primary.name)': '\(name)' must be \(k == 0 ? "a pointer (the buffer)" : "an integer (a count)")")
            }
            indices.append(i)
        }
        return DataArguments(buffer: indices[0], count: indices[1], itemSize: indices.count > 2 ? indices[2] : nil)
    }

    /// A C integer literal: decimal, 0x hexadecimal or 0 octal.
    static func cNumber(_ text: String) -> UInt64? {
        let t = text.lowercased()
        if t.hasPrefix("0x") { return UInt64(t.dropFirst(2), radix: 16) }
        if t.hasPrefix("0") && t.count > 1 { return UInt64(t.dropFirst(), radix: 8) }
        return UInt64(t)
    }

    private func build(_ pending: [PendingGroup], refused: [RefusedSymbol], flagSets: [String: FlagSet]) throws(Failure) -> Catalog {
        var functions: [CatalogFunction] = []
        var groups: [CatalogGroup] = []
        var seen: [String: Int] = [:]
        func add(_ sig: CSignature, fixed: Int, group: Int, line: Int) throws(Failure) {
            if let other = seen[sig.name] {
                throw Failure(line: line, message: "'\(sig.name)' is already in the catalog (line \(other))")
            }
            seen[sig.name] = line
            functions.append(CatalogFunction(name: sig.name, signature: sig, fixedCount: fixed,
                                             exportIndex: functions.count, groupIndex: group))
        }
        for g in pending {
            let index = groups.count
            guard let failure = g.failure else { throw Failure(line: g.line, message: "'\(g.primary.name)' needs a 'failure:' line") }
            if failure != .none && g.errnos.isEmpty {
                throw Failure(line: g.line, message: "'\(g.primary.name)' needs an 'errnos:' line")
            }
            if let d = g.defaultErrno, !g.errnos.contains(d) {
                throw Failure(line: g.line, message: "default '\(d)' of '\(g.primary.name)' is not among its errnos")
            }
            for e in g.errnos {
                let known = failure.usesEAI ? ErrorNames.eai(e) != nil : failure.usesHErrno ? ErrorNames.hErrno(e) != nil : ErrorNames.errno(e) != nil
                if !known { throw Failure(line: g.line, message: "'\(g.primary.name)' lists unknown error '\(e)'") }
            }
            var primary = g.primary
            let fixed = primary.parameters.count
            if primary.isVariadic {
                guard !g.variadic.isEmpty else {
                    throw Failure(line: g.line, message: "variadic '\(primary.name)' needs a 'variadic:' line naming the argument to forward")
                }
                primary.parameters += g.variadic
            }
            if primary.parameters.count > Catalog.maxArguments {
                throw Failure(line: g.line, message: "'\(primary.name)' has more than \(Catalog.maxArguments) parameters")
            }
            var members: [Int] = []
            members.append(functions.count)
            try add(primary, fixed: fixed, group: index, line: g.line)
            functions[functions.count - 1].testExpression = g.test
            for alias in g.aliases {
                var s = primary
                s.name = alias
                members.append(functions.count)
                try add(s, fixed: fixed, group: index, line: g.line)
            }
            for (s, line) in g.also {
                guard !s.isVariadic else { throw Failure(line: line, message: "an 'also:' entry point cannot be variadic") }
                members.append(functions.count)
                try add(s, fixed: s.parameters.count, group: index, line: line)
            }
            var flagArguments: [Int: String] = [:]
            for (param, set) in g.flagArgs {
                guard let i = primary.parameters.firstIndex(where: { $0.name == param }) else {
                    throw Failure(line: g.line, message: "'\(primary.name)' has no parameter '\(param)'")
                }
                guard flagSets[set] != nil else { throw Failure(line: g.line, message: "unknown flag set '\(set)'") }
                flagArguments[i] = set
            }
            // Arguments are matched across the group by name (see CatalogFunction.groupArguments).
            for m in members {
                let f = functions[m]
                functions[m].groupArguments = primary.parameters.enumerated().map { i, p in
                    if f.signature.parameters.count == primary.parameters.count && f.signature.parameters.map(\.type) == primary.parameters.map(\.type)
                        && f.signature.parameters.map(\.name) == primary.parameters.map(\.name) { return i }
                    guard let name = p.name else { return i < f.signature.parameters.count ? i : nil }
                    return f.signature.parameters.firstIndex { $0.name == name }
                }
                for (i, own) in functions[m].groupArguments.enumerated() {
                    if let own, f.signature.parameters[own].type != primary.parameters[i].type {
                        throw Failure(line: g.line, message: "'\(f.name)' has '\(primary.parameters[i].name ?? "?")' of another type than '\(primary.name)'")
                    }
                }
            }
            var group = CatalogGroup(index: index, section: g.section, header: g.header, failure: failure,
                                     errnos: g.errnos, defaultErrno: g.defaultErrno ?? g.errnos.first,
                                     isNoReturn: g.noReturn, members: members, flagArguments: flagArguments)
            group.isSignalUnsafe = g.signalUnsafe
            group.data = try dataArguments(g, primary: primary)
            group.faults = Set(g.faults.compactMap(DataFault.init(rawValue:)))
            if g.failsAfterReason != nil && failure == .none {
                throw Failure(line: g.line, message: "'\(primary.name)' has 'fails: after' but cannot fail ('failure: none')")
            }
            group.failsAfterReason = g.failsAfterReason
            for (kind, e) in g.defaultByKind where !g.errnos.contains(e) {
                throw Failure(line: g.line, message: "default '\(kind)=\(e)' of '\(primary.name)' is not among its errnos")
            }
            if !g.defaultByKind.isEmpty && Catalog.handle(of: primary) == nil && g.standardStream == nil {
                throw Failure(line: g.line, message: "'\(primary.name)' has a default by descriptor kind but no descriptor (an int fd, a FILE * or a DIR *)")
            }
            if g.stream != nil && (Catalog.handle(of: primary)?.kind == .stream) == (g.standardStream != nil) {
                throw Failure(line: g.line, message: "'\(primary.name)' has 'fails: stream:' with \(g.standardStream == nil ? "no FILE * parameter (name stdin or stdout)" : "a FILE * parameter and a standard stream")")
            }
            group.stream = g.stream
            group.standardStream = g.standardStream
            group.defaultByKind = g.defaultByKind
            if !group.faults.isEmpty && group.data == nil {
                throw Failure(line: g.line, message: "'\(primary.name)' has 'faults:' but no 'data:' line saying where its data is")
            }
            groups.append(group)
        }
        return Catalog(functions: functions, groups: groups, refused: refused, flagSets: flagSets)
    }
}

