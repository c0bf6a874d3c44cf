@_exported import CAspectsAdvice

/// One advised call, as a `call` rule's function receives it: Aspects' `AspectInfo` for C
/// functions (aspects_advice.h). Write the function with `@_cdecl` so the rule can name it,
/// build it into a dynamic library, and name that in the rule:
///
/// ```swift
/// import AspectsAdvice
///
/// @_cdecl("record_write")
/// public func recordWrite(_ raw: OpaquePointer) {
///     let call = Invocation(raw)
///     let count = call.int(2)                          // write's count
///     let written = call.returnInt                     // an after rule: what the original returned
///     ...
/// }
/// ```
///
/// ```json
/// {"symbol": "write", "position": "after", "action": {"call": "./.build/release/libWriteSizes.so:record_write"}}
/// ```
///
/// The record lives while the function runs; keep no `Invocation` past it. Arguments are
/// numbered as the rule numbers them (from 0, in the prototype of the function the rule names).
/// The function runs where the call was made — in a signal handler when the program made the
/// call in one — and the Swift runtime allocates and takes locks: advise from Swift only calls
/// a program does not make in handlers (docs/advice.md).
public struct Invocation {
    /// The record (`aspects_invocation *`), for the C functions of aspects_advice.h.
    public let raw: OpaquePointer

    public init(_ raw: OpaquePointer) { self.raw = raw }

    /// Where the advice runs.
    public enum Position: Int32, Sendable {
        case before = 0, instead = 1, after = 2
    }

    /// The kind of an argument or of the result.
    public enum Kind: Int32, Sendable {
        case none = 0, int = 1, uint = 2, pointer = 3, string = 4, double = 5, structure = 6
    }

    /// Why a change the advice asked for was refused.
    public enum Refusal: Int32, Error, Sendable {
        /// There is no argument of that number.
        case noSuchArgument = -1
        /// The argument or result is of another kind.
        case wrongKind = -2
        /// Not at this position: proceeding outside `instead`, a result before the original ran,
        /// arguments after it.
        case notAtThisPosition = -3
        /// The original already ran for this call.
        case alreadyProceeded = -4
    }

    static func check(_ status: Int32) throws(Refusal) {
        if status != 0 { throw Refusal(rawValue: status) ?? .wrongKind }
    }

    // MARK: - the call

    /// The version of aspects_advice.h the running libaspects.so speaks (major << 16 | minor).
    public var engineVersion: UInt32 { aspects_invocation_version(raw) }
    /// The name that was called (`open64`, `__read_chk`).
    public var symbol: String { String(cString: aspects_symbol(raw)) }
    /// The id of the rule that fired.
    public var rule: String { String(cString: aspects_fired_rule(raw)) }
    /// The call's number among the rule's matching calls, in the rule's scope.
    public var callNumber: UInt64 { aspects_call_number(raw) }
    public var position: Position { Position(rawValue: aspects_position(raw)) ?? .before }

    // MARK: - arguments

    public var argumentCount: Int { Int(aspects_arg_count(raw)) }
    public func kind(ofArgument i: Int) -> Kind { Kind(rawValue: aspects_arg_type(raw, UInt32(i))) ?? .none }
    /// An integer argument, sign- or zero-extended (0 for another kind).
    public func int(_ i: Int) -> Int64 { aspects_arg_int(raw, UInt32(i)) }
    /// A pointer or string argument (nil for NULL or another kind).
    public func pointer(_ i: Int) -> UnsafeMutableRawPointer? { aspects_arg_ptr(raw, UInt32(i)) }
    /// A `const char *` argument as a String (nil for NULL or another kind); invalid UTF-8 is repaired.
    public func string(_ i: Int) -> String? {
        guard kind(ofArgument: i) == .string, let p = aspects_arg_ptr(raw, UInt32(i)) else { return nil }
        return String(cString: p.assumingMemoryBound(to: CChar.self))
    }
    /// A float or double argument (0 for another kind).
    public func double(_ i: Int) -> Double { aspects_arg_double(raw, UInt32(i)) }
    /// Where the argument's value is held, whatever its kind (a struct passed by value).
    public func address(ofArgument i: Int) -> UnsafeMutableRawPointer? { aspects_arg_address(raw, UInt32(i)) }

    /// Changes an integer argument for the original (before it, or instead until proceeding).
    public func setInt(_ i: Int, _ value: Int64) throws(Refusal) { try Self.check(aspects_set_arg_int(raw, UInt32(i), value)) }
    /// Changes a pointer or string argument; the memory must outlive the original's call.
    public func setPointer(_ i: Int, _ value: UnsafeMutableRawPointer?) throws(Refusal) { try Self.check(aspects_set_arg_ptr(raw, UInt32(i), value)) }
    public func setDouble(_ i: Int, _ value: Double) throws(Refusal) { try Self.check(aspects_set_arg_double(raw, UInt32(i), value)) }

    // MARK: - the original (Aspects' originalInvocation)

    /// `instead` only, at most once: calls the original with the arguments as they are now; its
    /// result and errno become the call's, to read and replace.
    public func proceed() throws(Refusal) { try Self.check(aspects_proceed(raw)) }
    public var proceeded: Bool { aspects_proceeded(raw) != 0 }

    // MARK: - the result (after: the original's; instead: the advice's own)

    public var returnKind: Kind { Kind(rawValue: aspects_return_type(raw)) ?? .none }
    public var returnInt: Int64 { aspects_return_int(raw) }
    public var returnPointer: UnsafeMutableRawPointer? { aspects_return_ptr(raw) }
    public var returnDouble: Double { aspects_return_double(raw) }
    /// The result's storage (a struct returned by value); nil before the original.
    public var returnAddress: UnsafeMutableRawPointer? { aspects_return_address(raw) }
    public func setReturn(_ value: Int64) throws(Refusal) { try Self.check(aspects_set_return_int(raw, value)) }
    public func setReturn(pointer value: UnsafeMutableRawPointer?) throws(Refusal) { try Self.check(aspects_set_return_ptr(raw, value)) }
    public func setReturn(double value: Double) throws(Refusal) { try Self.check(aspects_set_return_double(raw, value)) }

    // MARK: - errno

    /// What the caller had (before), or will see (instead, after). The advice's own calls do
    /// not change it; only `setErrno` does.
    public var errno: Int32 { aspects_errno(raw) }
    public func setErrno(_ value: Int32) throws(Refusal) { try Self.check(aspects_set_errno(raw, value)) }

    // MARK: - who called

    /// The return address of the advised call.
    public var callerAddress: UnsafeRawPointer? { aspects_caller_address(raw) }
    /// The calling object's file name ("" when it cannot be told), as events print sites.
    public var callerObject: String { String(cString: aspects_caller_object(raw)) }
    /// The return address's offset in that file.
    public var callerOffset: UInt64 { aspects_caller_offset(raw) }
}
