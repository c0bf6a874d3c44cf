import AspectsCore

/// What names one added rule for good: its id and the serial the table gave it, written
/// `id@serial` (`disk-full@17`). An id can be reused once its rule is removed; a token cannot,
/// so a stale `remove disk-full@17` can never take a newer rule that reuses the id
/// (Aspects' AspectToken removes exactly the hook it was returned for).
public struct RuleToken: Hashable, Sendable, CustomStringConvertible {
    /// The rule's id (given, or generated: r1, r2, ...).
    public var id: String
    /// The serial the table gave the rule when it was added; never given twice in a table.
    public var serial: UInt64

    /// The token of the rule `id` added with `serial`.
    public init(id: String, serial: UInt64) {
        self.id = id
        self.serial = serial
    }

    /// Parses `id@serial`; nil for anything else (a plain id among them).
    public init?(_ text: String) {
        guard let at = text.lastIndex(of: "@"), let serial = UInt64(text[text.index(after: at)...]), serial > 0 else { return nil }
        id = String(text[..<at])
        self.serial = serial
        guard !id.isEmpty, !id.contains("@") else { return nil }
    }

    /// `id@serial`, as `add` prints it and `remove` takes it.
    public var description: String { "\(id)@\(serial)" }
}

/// A rule added through the Swift API, with the table it lives in: `try token.remove()`.
public struct AspectToken: CustomStringConvertible {
    /// The rule it names: id and serial.
    public let token: RuleToken
    let table: AdviceTable

    /// Removes exactly this rule; an error if it is gone already (removed, or retired by
    /// autoRemove), even when another rule now has its id.
    public func remove() throws(AspectsError) {
        try table.remove(ids: [token.description])
    }

    /// `id@serial`, as aspectctl's `add` prints it and `remove` takes it.
    public var description: String { token.description }
}
