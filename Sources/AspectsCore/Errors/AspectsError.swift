import CAspectsABI

/// The one error type of aspects (Aspects' AspectErrorCode): a stable code from
/// `enum aspects_error` in the ABI header, where it happened (rule, field, source position),
/// what is wrong and how to fix it. The CLI maps `code` to its exit status.
public struct AspectsError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Code: UInt32, Sendable, CaseIterable {
        case malformedJSON = 1, unknownField, missingField, wrongType, invalidValue, unknownSymbol,
             refusedSymbol, prototypeMismatch, badPrototype, positionNotAllowed, argOutOfRange,
             matcherType, unknownErrno, errnoNotAllowed, duplicateID, tableFull, groupFull, noTable,
             tableExists, badTable, system, noSuchRule, badTableName, usage, limit, noInput,
             tableBusy, output

        /// The C enumerator this code mirrors (checked by a test against aspects_abi.h).
        public var abiValue: UInt32 {
            switch self {
            case .malformedJSON: return ASPECTS_ERR_MALFORMED_JSON.rawValue
            case .unknownField: return ASPECTS_ERR_UNKNOWN_FIELD.rawValue
            case .missingField: return ASPECTS_ERR_MISSING_FIELD.rawValue
            case .wrongType: return ASPECTS_ERR_WRONG_TYPE.rawValue
            case .invalidValue: return ASPECTS_ERR_INVALID_VALUE.rawValue
            case .unknownSymbol: return ASPECTS_ERR_UNKNOWN_SYMBOL.rawValue
            case .refusedSymbol: return ASPECTS_ERR_REFUSED_SYMBOL.rawValue
            case .prototypeMismatch: return ASPECTS_ERR_PROTOTYPE_MISMATCH.rawValue
            case .badPrototype: return ASPECTS_ERR_BAD_PROTOTYPE.rawValue
            case .positionNotAllowed: return ASPECTS_ERR_POSITION_NOT_ALLOWED.rawValue
            case .argOutOfRange: return ASPECTS_ERR_ARG_OUT_OF_RANGE.rawValue
            case .matcherType: return ASPECTS_ERR_MATCHER_TYPE.rawValue
            case .unknownErrno: return ASPECTS_ERR_UNKNOWN_ERRNO.rawValue
            case .errnoNotAllowed: return ASPECTS_ERR_ERRNO_NOT_ALLOWED.rawValue
            case .duplicateID: return ASPECTS_ERR_DUPLICATE_ID.rawValue
            case .tableFull: return ASPECTS_ERR_TABLE_FULL.rawValue
            case .groupFull: return ASPECTS_ERR_GROUP_FULL.rawValue
            case .noTable: return ASPECTS_ERR_NO_TABLE.rawValue
            case .tableExists: return ASPECTS_ERR_TABLE_EXISTS.rawValue
            case .badTable: return ASPECTS_ERR_BAD_TABLE.rawValue
            case .system: return ASPECTS_ERR_SYSTEM.rawValue
            case .noSuchRule: return ASPECTS_ERR_NO_SUCH_RULE.rawValue
            case .badTableName: return ASPECTS_ERR_BAD_TABLE_NAME.rawValue
            case .usage: return ASPECTS_ERR_USAGE.rawValue
            case .limit: return ASPECTS_ERR_LIMIT.rawValue
            case .noInput: return ASPECTS_ERR_NO_INPUT.rawValue
            case .tableBusy: return ASPECTS_ERR_TABLE_BUSY.rawValue
            case .output: return ASPECTS_ERR_OUTPUT.rawValue
            }
        }

        /// The one message table: what each code means, in a few words.
        public var summary: String {
            switch self {
            case .malformedJSON: return "malformed JSON"
            case .unknownField: return "unknown field"
            case .missingField: return "missing field"
            case .wrongType: return "wrong type"
            case .invalidValue: return "invalid value"
            case .unknownSymbol: return "unknown symbol"
            case .refusedSymbol: return "refused symbol"
            case .prototypeMismatch: return "prototype contradicts the catalog"
            case .badPrototype: return "bad prototype"
            case .positionNotAllowed: return "position not allowed"
            case .argOutOfRange: return "argument index out of range"
            case .matcherType: return "matcher does not fit the argument's type"
            case .unknownErrno: return "unknown error name"
            case .errnoNotAllowed: return "error the function cannot produce"
            case .duplicateID: return "duplicate rule id"
            case .tableFull: return "table full"
            case .groupFull: return "too many rules on one function"
            case .noTable: return "no such table"
            case .tableExists: return "table exists"
            case .badTable: return "unusable table"
            case .system: return "system call failed"
            case .noSuchRule: return "no such rule"
            case .badTableName: return "bad table name"
            case .usage: return "usage"
            case .limit: return "rule exceeds a limit of the table"
            case .noInput: return "cannot read input"
            case .tableBusy: return "table locked by another writer"
            case .output: return "cannot write output"
            }
        }
    }

    public var code: Code
    /// Which rule: its id, or its position in the file ("rule 3").
    public var rule: String?
    /// The field path, e.g. `when.args[0].glob`.
    public var field: String?
    /// Where in the source text (file:line:column), when known.
    public var location: String?
    public var message: String
    /// What to do about it.
    public var fix: String?

    public init(_ code: Code, rule: String? = nil, field: String? = nil, location: String? = nil,
                _ message: String, fix: String? = nil) {
        self.code = code
        self.rule = rule
        self.field = field
        self.location = location
        self.message = message
        self.fix = fix
    }

    public var description: String {
        var s = ""
        if let location { s += "\(location): " }
        if let rule { s += "\(rule): " }
        if let field { s += "\(field): " }
        s += message
        if let fix { s += "; \(fix)" }
        return s + " [\(code.summary), E\(code.abiValue)]"
    }

    func with(rule: String?) -> AspectsError {
        var e = self
        if e.rule == nil { e.rule = rule }
        return e
    }
}
