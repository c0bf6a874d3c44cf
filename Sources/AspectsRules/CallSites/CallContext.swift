import CAspectsABI

/// A calling context: the call site, then the return addresses of its callers, each as a
/// `CallSite` — what the `context` condition takes, events of rules that record contexts
/// carry, and `explore --strategy context` plans by. Its hash is aspects_context_hash, the one
/// the preload computes from the frames it unwinds.
public struct CallContext: Hashable, Sendable, CustomStringConvertible {
    /// The site first.
    public var frames: [CallSite]

    public init(_ frames: [CallSite]) { self.frames = frames }

    /// The first `depth` frames.
    public func prefix(_ depth: Int) -> CallContext { CallContext(Array(frames.prefix(depth))) }

    /// The frames before the first of `frames` found in `stop` (the site always stays): a
    /// context cut there is still a prefix, which the `context` condition matches.
    public func before(_ stop: Set<CallSite>) -> CallContext {
        guard let k = frames.dropFirst().firstIndex(where: { stop.contains($0) }) else { return self }
        return CallContext(Array(frames[..<k]))
    }

    /// aspects_context_hash of the frames (aspects_abi.h): what the rule slot stores.
    public var hash: UInt64 {
        var h = aspects_context_hash_start(UInt32(frames.count))
        for f in frames {
            let name = Array(f.object.utf8CString.dropLast())
            h = name.withUnsafeBufferPointer { aspects_context_hash_frame(h, $0.baseAddress, UInt32($0.count), f.offset) }
        }
        return h
    }

    /// "app+0x1a2b ← app+0x3c4d": the site, then its callers.
    public var description: String { frames.map(\.description).joined(separator: " ← ") }

    /// The JSON array the `context` condition takes.
    public var ruleJSON: String { "[" + frames.map { "\"\($0)\"" }.joined(separator: ",") + "]" }
}
