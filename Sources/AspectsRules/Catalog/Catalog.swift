/// How a function reports failure: what `"fail"` makes it return (docs/ARCHITECTURE.md §8,
/// docs/catalog.md).
package enum FailureStyle: String, Sendable, Codable, CaseIterable {
    /// returns -1 and sets errno (`write`, `open`, `connect`)
    case minusOneErrno = "-1 errno"
    /// returns NULL and sets errno (`malloc`, `fopen`)
    case nullErrno = "NULL errno"
    /// returns EOF and sets errno (`fclose`, `fputs`)
    case eofErrno = "EOF errno"
    /// returns MAP_FAILED and sets errno (`mmap`)
    case mapFailedErrno = "MAP_FAILED errno"
    /// returns the error number itself, errno untouched (`pthread_create`, `posix_fallocate`)
    case errnoReturned = "errno-return"
    /// returns an EAI_* code (`getaddrinfo`)
    case eaiCode = "eai"
    /// returns 0 (a short count) and sets errno (`fread`, `fwrite`)
    case zeroErrno = "0 errno"
    /// returns NULL and sets h_errno (`gethostbyname`)
    case nullHErrno = "NULL h_errno"
    /// returns NULL and sets nothing (`dlopen`: dlerror() then has no message)
    case null = "NULL"
    /// cannot fail (`getpid`, `free`)
    case none = "none"

    /// The return value of a failure, given the errno (or EAI code) it reports.
    package func returnValue(for code: Int32) -> Int64? {
        switch self {
        case .minusOneErrno, .eofErrno, .mapFailedErrno: return -1
        case .nullErrno, .zeroErrno, .nullHErrno, .null: return 0
        case .errnoReturned, .eaiCode: return Int64(code)
        case .none: return nil
        }
    }

    /// The preload's name of the style (enum asp_failure, Sources/CPreload/catalog.h): it
    /// records errno in events only for results that are failures.
    package var cEnumerator: String {
        switch self {
        case .minusOneErrno: return "ASP_FAILURE_MINUS_ONE_ERRNO"
        case .nullErrno: return "ASP_FAILURE_NULL_ERRNO"
        case .eofErrno: return "ASP_FAILURE_EOF_ERRNO"
        case .mapFailedErrno: return "ASP_FAILURE_MAP_FAILED_ERRNO"
        case .errnoReturned: return "ASP_FAILURE_ERRNO_RETURNED"
        case .eaiCode: return "ASP_FAILURE_EAI"
        case .zeroErrno: return "ASP_FAILURE_ZERO_ERRNO"
        case .nullHErrno: return "ASP_FAILURE_NULL_H_ERRNO"
        case .null: return "ASP_FAILURE_NULL"
        case .none: return "ASP_FAILURE_NONE"
        }
    }

    /// Whether the failure sets errno (otherwise the code is the return value, or h_errno).
    package var setsErrno: Bool {
        switch self {
        case .minusOneErrno, .nullErrno, .eofErrno, .mapFailedErrno, .zeroErrno: return true
        case .errnoReturned, .eaiCode, .nullHErrno, .null, .none: return false
        }
    }

    /// Whether the error names are h_errno codes (HOST_NOT_FOUND ...).
    package var usesHErrno: Bool { self == .nullHErrno }
    /// Whether the error names are EAI_* codes.
    package var usesEAI: Bool { self == .eaiCode }
}

/// One exported entry point of the preload: a name with its own signature.
package struct CatalogFunction: Sendable, Equatable {
    package var name: String
    /// The declaration, with a variadic function's forwarded optional argument appended.
    package var signature: CSignature
    /// Number of fixed parameters (for variadic functions; equals the arity otherwise).
    package var fixedCount: Int
    package var isVariadic: Bool { signature.isVariadic }
    /// Index of this export in the generated tables (`asp_exports`).
    package var exportIndex: Int
    /// Index of its alias group (the armed byte).
    package var groupIndex: Int
    /// For each parameter of the group's primary prototype, the index of the same parameter
    /// (by name) in this one, or nil where it has none: rules speak of the group's arguments,
    /// so `path` is argument 0 of `stat` and argument 1 of `__xstat` alike.
    package var groupArguments: [Int?] = []
    /// The `test:` expression of the catalog (primary names only): a harmless call.
    package var testExpression: String?

    /// The C declaration, with the forwarded variadic arguments in a comment:
    /// `int open(const char *path, int flags, ... /* mode_t mode */)`.
    package var declaration: String {
        guard isVariadic else { return signature.declaration }
        var fixed = signature
        let extra = Array(fixed.parameters[fixedCount...])
        fixed.parameters.removeLast(extra.count)
        let text = fixed.declaration
        let comment = extra.map { p in p.name.map { p.spelling + (p.spelling.hasSuffix("*") ? "" : " ") + $0 } ?? p.spelling }
        return String(text.dropLast()) + " /* " + comment.joined(separator: ", ") + " */)"
    }

    /// The group's argument index of this function's argument `own`, if the group has it.
    package func groupIndex(ofArgument own: Int) -> Int? { groupArguments.firstIndex { $0 == own } }

    package init(name: String, signature: CSignature, fixedCount: Int, exportIndex: Int, groupIndex: Int, groupArguments: [Int?] = [], testExpression: String? = nil) {
        self.name = name
        self.signature = signature
        self.fixedCount = fixedCount
        self.exportIndex = exportIndex
        self.groupIndex = groupIndex
        self.groupArguments = groupArguments
        self.testExpression = testExpression
    }
}

/// An alias group: the names under which one libc function is reached, advised as one.
package struct CatalogGroup: Sendable, Equatable {
    package var index: Int
    package var section: String
    package var header: String
    package var failure: FailureStyle
    /// Error names the function's documentation allows (errno names, or EAI_* names).
    package var errnos: [String]
    package var defaultErrno: String?
    package var isNoReturn: Bool
    /// Export indices; the first one is the primary name.
    package var members: [Int]
    /// Arguments (by index in the primary prototype) whose values are flags of a named set.
    package var flagArguments: [Int: String] = [:]
    /// Not async-signal-safe (`flags: signal-unsafe`): a correct program never calls it from a
    /// signal handler, so the preload may load a `call` rule's object at such a call.
    package var isSignalUnsafe = false
    /// Where the bytes the function transfers are (`data:`), for the data faults.
    package var data: DataArguments?
    /// The data faults that make sense for it (`faults:`).
    package var faults: Set<DataFault> = []
    /// Why its failure comes after its work (`fails: after: REASON`: close releases the
    /// descriptor, fsync ran the write-back); nil: it fails without acting.
    package var failsAfterReason: String?
    /// A stdio function that reads or writes through its stream's descriptor (`fails: stream:
    /// read|write`): a `"fail"` fails that descriptor's read(2) or write(2) under glibc's own
    /// code, so the stream is left as a real error leaves it (docs/catalog.md).
    package var stream: StreamIO?
    /// The stream of a stdio function that takes none (`fails: stream: write stdout`: puts,
    /// putchar; stdin: getchar): "stdin" or "stdout".
    package var standardStream: String?
    /// The default error by what the call's descriptor is (`default: file=E pipe=E socket=E`),
    /// decided at the call; `defaultErrno` is the `file` one. Empty: one default for all.
    package var defaultByKind: [DescriptorKind: String] = [:]

    /// Where a failure of it happens as the kernel and libc give it: `after` the original ran
    /// for the functions that act and then report the error, `instead` of it for the rest.
    /// A `"fail"` rule without "position" and explore's faults fail it there.
    package var failurePosition: Rule.Position { failsAfterReason == nil ? .instead : .after }

    package init(index: Int, section: String, header: String, failure: FailureStyle, errnos: [String], defaultErrno: String? = nil, isNoReturn: Bool, members: [Int], flagArguments: [Int: String] = [:], isSignalUnsafe: Bool = false, data: DataArguments? = nil, faults: Set<DataFault> = [], failsAfterReason: String? = nil, stream: StreamIO? = nil, standardStream: String? = nil, defaultByKind: [DescriptorKind: String] = [:]) {
        self.index = index
        self.section = section
        self.header = header
        self.failure = failure
        self.errnos = errnos
        self.defaultErrno = defaultErrno
        self.isNoReturn = isNoReturn
        self.members = members
        self.flagArguments = flagArguments
        self.isSignalUnsafe = isSignalUnsafe
        self.data = data
        self.faults = faults
        self.failsAfterReason = failsAfterReason
        self.stream = stream
        self.standardStream = standardStream
        self.defaultByKind = defaultByKind
    }
}

/// The direction of a stdio function's system call (`fails: stream: read|write`).
package enum StreamIO: String, Sendable, CaseIterable {
    case read, write
}

/// What a descriptor is, for a default fault (`default: file=ENOSPC pipe=EPIPE socket=...`):
/// the preload finds it with fstat(2) when the fault fires. `file` is a regular file and
/// anything not named (a device, a terminal). The order is the preload's (enum asp_kind).
package enum DescriptorKind: String, Sendable, CaseIterable, Comparable {
    case file, pipe, socket

    package static func < (a: DescriptorKind, b: DescriptorKind) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }
}

/// The arguments of a function that transfers bytes, by index in its group's primary
/// prototype: read's buf and count, fread's ptr, nmemb and size.
package struct DataArguments: Sendable, Equatable {
    package var buffer: Int
    package var count: Int
    /// fread: the size of one item (the count and the result are in items); nil: bytes.
    package var itemSize: Int?

    package init(buffer: Int, count: Int, itemSize: Int? = nil) {
        self.buffer = buffer
        self.count = count
        self.itemSize = itemSize
    }
}

/// A declarative data fault (`"corrupt"`, `"short"`), allowed where the catalog lists it.
package enum DataFault: String, Sendable, CaseIterable {
    /// after: seeded bits of the bytes the call returned are flipped
    case corrupt
    /// before: the count is cut to a seeded part, so the original transfers less
    case short
}

/// A named set of flag constants (`O_CREAT` ...), for matchers written with names and for
/// events, which print such arguments by name.
package struct FlagSet: Sendable, Equatable {
    package enum Kind: Sendable, Equatable {
        /// Bits, with a low field of values under `field` (0: none): open's access mode.
        case bits(field: UInt64)
        /// Values, not bits: AF_INET6 is 10, not AF_INET|8.
        case values
    }

    package var name: String
    package var flags: [(name: String, value: UInt64)]
    package var kind: Kind = .bits(field: 0)

    package init(name: String, flags: [(name: String, value: UInt64)], kind: Kind = .bits(field: 0)) {
        self.name = name
        self.flags = flags
        self.kind = kind
    }

    package static func == (a: FlagSet, b: FlagSet) -> Bool {
        a.name == b.name && a.kind == b.kind && a.flags.map(\.name) == b.flags.map(\.name) && a.flags.map(\.value) == b.flags.map(\.value)
    }

    package func value(of flag: String) -> UInt64? { flags.first { $0.name == flag }?.value }

    /// A value as strace writes it: `O_WRONLY|O_CREAT|O_TRUNC`, `SOCK_STREAM|SOCK_CLOEXEC`,
    /// `AF_INET6`. Bits are taken widest first (O_SYNC holds O_DSYNC's bit); bits no flag
    /// names, and values a `values` set does not list, are printed as numbers.
    package func render(_ value: UInt64) -> String {
        switch kind {
        case .values:
            return flags.first { $0.value == value }?.name ?? String(value)
        case .bits(let mask):
            var parts: [String] = []
            if mask != 0 {
                let field = value & mask
                parts.append(flags.first { $0.value == field }?.name ?? "0x" + String(field, radix: 16))
            }
            var rest = value & ~mask
            let bits = flags.enumerated().filter { $0.element.value != 0 && $0.element.value & mask == 0 }
                .sorted { ($0.element.value.nonzeroBitCount, -$0.offset) > ($1.element.value.nonzeroBitCount, -$1.offset) }
            for (_, f) in bits where rest & f.value == f.value {
                parts.append(f.name)
                rest &= ~f.value
            }
            if rest != 0 || parts.isEmpty { parts.append("0x" + String(rest, radix: 16)) }
            return parts.joined(separator: "|")
        }
    }
}

/// A symbol that rules may not name, and why.
package struct RefusedSymbol: Sendable, Equatable {
    package var name: String
    package var reason: String

    package init(name: String, reason: String) {
        self.name = name
        self.reason = reason
    }
}

/// The symbol catalog: every function the preload exports, parsed from `config/catalog.spec`.
package struct Catalog: Sendable, Equatable {
    /// Parameters an advised function may have (events record the first six; functions with
    /// more are called through ffi_call rather than directly).
    package static let maxArguments = 8

    package var functions: [CatalogFunction] { didSet { abiHash = Self.abiHash(of: functions) } }
    package var groups: [CatalogGroup]
    package var refused: [RefusedSymbol]
    package var flagSets: [String: FlagSet]
    /// Named families of functions (`write`: write pwrite writev ...), for `"family"` rules.
    package var families: [String: [String]] = [:]
    private var byName: [String: Int]

    /// `abiHash`: the functions' hash when the caller has it already (the generated built-in
    /// catalog, whose generator computed it from the same functions); computed otherwise.
    package init(
        functions: [CatalogFunction], groups: [CatalogGroup], refused: [RefusedSymbol], flagSets: [String: FlagSet] = [:],
        abiHash: UInt64? = nil
    ) {
        self.functions = functions
        self.groups = groups
        self.refused = refused
        self.flagSets = flagSets
        var map: [String: Int] = [:]
        for f in functions { map[f.name] = f.exportIndex }
        byName = map
        self.abiHash = abiHash ?? Self.abiHash(of: functions)
    }

    /// Where a function's descriptor is, for the stream model and defaults by descriptor kind:
    /// a FILE * or DIR * parameter, else an int named fd or sockfd (the preload's enum asp_handle).
    package enum HandleKind: Sendable { case fd, stream, directory }
    package static func handle(of sig: CSignature) -> (index: Int, kind: HandleKind)? {
        for (i, p) in sig.parameters.enumerated() {
            let t = p.spelling.replacingOccurrences(of: " ", with: "")
            if t == "FILE*" { return (i, .stream) }
            if t == "DIR*" { return (i, .directory) }
        }
        if let i = sig.parameters.firstIndex(where: { ($0.name == "fd" || $0.name == "sockfd") && $0.type == .i32 }) { return (i, .fd) }
        return nil
    }

    /// The catalog compiled into this build: the spec the preload was generated from, parsed
    /// by aspects-gen and written out as Swift values (CatalogData.swift), since parsing it
    /// here took ~23 % of `aspectctl run`'s CPU time (BENCHMARKS.md).
    package static let builtIn: Catalog = generatedBuiltIn()

    package func function(named name: String) -> CatalogFunction? {
        byName[name].map { functions[$0] }
    }

    package func group(of function: CatalogFunction) -> CatalogGroup { groups[function.groupIndex] }

    package func primary(of group: CatalogGroup) -> CatalogFunction { functions[group.members[0]] }

    package func refusal(for name: String) -> RefusedSymbol? { refused.first { $0.name == name } }

    /// FNV-1a over the exported ABI (names, groups, types): a table is only used by a preload
    /// built from the same catalog, since armed bytes are indexed by group. Kept, not computed
    /// on each use: every table created or opened checks it (explore: two per run).
    package private(set) var abiHash: UInt64 = 0

    package static func abiHash(of functions: [CatalogFunction]) -> UInt64 {
        var text = ""
        for f in functions {
            text += "\(f.name):\(f.groupIndex):\(f.signature.returnType.rawValue):"
            text += f.signature.parameters.map { String($0.type.rawValue) }.joined(separator: ",")
            text += ":\(f.fixedCount):" + f.groupArguments.map { $0.map(String.init) ?? "-" }.joined(separator: ",") + ";"
        }
        return FNV1a.hash(text)
    }
}

/// 64-bit FNV-1a, for catalog identity (not for security).
package enum FNV1a {
    package static func hash(_ text: String) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in text.utf8 {
            h ^= UInt64(b)
            h = h &* 0x0000_0100_0000_01b3
        }
        return h
    }
}
