/// How a fault point fails its call (`explore --fault`).
public enum FaultKind: String, Sendable, CaseIterable, Hashable {
    /// The call fails with the errno, once, where the catalog says its failure happens.
    case error
    /// The call transfers a seeded part of its count (the `"short"` data fault): a partial
    /// transfer the caller must continue. Only for functions whose catalog `faults:` allow it.
    case short
    /// The call and every later one fail, as a full disk stays full.
    case persistent

    /// Whether it applies to `function`: short needs a count the catalog can cut.
    package func applies(to function: String, in catalog: Catalog) -> Bool {
        guard self == .short else { return true }
        return catalog.function(named: function).map { catalog.group(of: $0).faults.contains(.short) } ?? false
    }
}

/// How a campaign picks its fault points (explore's `--strategy`): public, as AspectsTesting's
/// `Aspects.explore` takes it.
public enum FaultPointStrategy: String, Sendable, CaseIterable { case sites, nth, both, context }
