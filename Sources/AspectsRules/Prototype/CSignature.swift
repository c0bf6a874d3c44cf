import CAspectsABI

/// The ABI class of a C type as the preload handles it (`enum aspects_type`).
package enum ABIType: UInt8, Sendable, CaseIterable, Codable {
    case void = 0, i8, u8, i16, u16, i32, u32, i64, u64, pointer, string, f32, f64
    /// A struct passed or returned by value (prototype rules that declare its fields).
    case structure

    package var isInteger: Bool {
        switch self {
        case .i8, .u8, .i16, .u16, .i32, .u32, .i64, .u64: return true
        default: return false
        }
    }
    package var isSigned: Bool { self == .i8 || self == .i16 || self == .i32 || self == .i64 }
    package var isPointer: Bool { self == .pointer || self == .string }
    package var isFloat: Bool { self == .f32 || self == .f64 }

    /// Width in bits of an integer type (pointers are 64-bit on the supported ABIs). The one
    /// place the widths are stated: `accepts`, matchers and the event reader derive from it.
    package var bits: Int {
        switch self {
        case .i8, .u8: return 8
        case .i16, .u16: return 16
        case .i32, .u32, .f32: return 32
        case .void: return 0
        default: return 64
        }
    }

    /// Whether an integer value fits this type (pointers accept any 64-bit value): a signed
    /// type of n bits holds -2^(n-1) up to 2^(n-1) - 1, an unsigned one 0 up to 2^n - 1.
    package func accepts(_ value: Int64) -> Bool {
        if isPointer { return true }
        guard isInteger else { return false }
        if bits == 64 { return isSigned || value >= 0 }
        let end = Int64(1) << Int64(isSigned ? bits - 1 : bits)
        return isSigned ? -end <= value && value < end : 0 <= value && value < end
    }

    package var cName: String {
        switch self {
        case .void: return "void"
        case .i8: return "int8_t"
        case .u8: return "uint8_t"
        case .i16: return "int16_t"
        case .u16: return "uint16_t"
        case .i32: return "int32_t"
        case .u32: return "uint32_t"
        case .i64: return "int64_t"
        case .u64: return "uint64_t"
        case .pointer: return "pointer"
        case .string: return "string"
        case .f32: return "float"
        case .f64: return "double"
        case .structure: return "struct"
        }
    }

    /// The name of the C enumerator, for generated code.
    package var cEnumerator: String {
        switch self {
        case .void: return "ASPECTS_T_VOID"
        case .i8: return "ASPECTS_T_I8"
        case .u8: return "ASPECTS_T_U8"
        case .i16: return "ASPECTS_T_I16"
        case .u16: return "ASPECTS_T_U16"
        case .i32: return "ASPECTS_T_I32"
        case .u32: return "ASPECTS_T_U32"
        case .i64: return "ASPECTS_T_I64"
        case .u64: return "ASPECTS_T_U64"
        case .pointer: return "ASPECTS_T_PTR"
        case .string: return "ASPECTS_T_STR"
        case .f32: return "ASPECTS_T_F32"
        case .f64: return "ASPECTS_T_F64"
        case .structure: return "ASPECTS_T_STRUCT"
        }
    }
}

/// One parameter of a C declaration: its spelling as written and its ABI class.
package struct CParameter: Sendable, Equatable {
    package var name: String?
    package var spelling: String
    package var type: ABIType
    /// For `.structure`: the struct's tag (`struct pair`).
    package var structName: String?

    package init(name: String?, spelling: String, type: ABIType, structName: String? = nil) {
        self.name = name
        self.spelling = spelling
        self.type = type
        self.structName = structName
    }
}

/// A parsed C function declaration.
package struct CSignature: Sendable, Equatable {
    package var name: String
    package var returnSpelling: String
    package var returnType: ABIType
    /// For a struct returned by value: its tag.
    package var returnStructName: String?
    package var parameters: [CParameter]
    /// `...` was present. The forwarded optional argument (if any) is appended by the catalog.
    package var isVariadic: Bool

    package init(name: String, returnSpelling: String, returnType: ABIType, parameters: [CParameter], isVariadic: Bool) {
        self.name = name
        self.returnSpelling = returnSpelling
        self.returnType = returnType
        self.parameters = parameters
        self.isVariadic = isVariadic
    }

    /// `ssize_t write(int fd, const void *buf, size_t count)`, normalized.
    package var declaration: String {
        var params = parameters.map { p in
            let sep = p.spelling.hasSuffix("*") ? "" : " "
            return p.name.map { p.spelling + sep + $0 } ?? p.spelling
        }
        if isVariadic { params.append("...") }
        if params.isEmpty { params = ["void"] }
        let sep = returnSpelling.hasSuffix("*") ? "" : " "
        return "\(returnSpelling)\(sep)\(name)(\(params.joined(separator: ", ")))"
    }

    /// Whether two signatures agree in the ABI (names and spellings aside).
    package func abiEquals(_ other: CSignature) -> Bool {
        returnType == other.returnType && isVariadic == other.isVariadic && returnStructName == other.returnStructName
            && parameters.map(\.type) == other.parameters.map(\.type) && parameters.map(\.structName) == other.parameters.map(\.structName)
    }
}
