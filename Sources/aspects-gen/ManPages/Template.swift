/// A hand-written page with generated parts: a line `.\" @NAME@` is replaced by the lines
/// generated for NAME. Every generated part must have its marker and every marker its part, so
/// neither the template nor the generator can lose a part without the generation failing.
struct Template {
    var path: String
    var text: String

    static func markerName(_ line: String) -> String? {
        guard line.hasPrefix(".\\\" @"), line.hasSuffix("@"), line.count > 6 else { return nil }
        return String(line.dropFirst(5).dropLast())
    }

    /// The names of the markers, in order.
    var markers: [String] { lines.compactMap(Self.markerName) }

    private var lines: [String] { text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) }

    func filled(_ parts: [String: [String]]) throws -> String {
        var out: [String] = []
        var used = Set<String>()
        for line in lines {
            guard let name = Self.markerName(line) else { out.append(line); continue }
            guard let part = parts[name] else {
                throw ManPageError("\(path): marker @\(name)@ names no generated part (known: \(parts.keys.sorted().joined(separator: ", ")))")
            }
            guard used.insert(name).inserted else { throw ManPageError("\(path): marker @\(name)@ appears twice; keep one") }
            out += part
        }
        if let missing = parts.keys.sorted().first(where: { !used.contains($0) }) {
            throw ManPageError("\(path): no marker for the generated part \(missing); add a line .\\\" @\(missing)@ where it belongs")
        }
        return out.joined(separator: "\n")
    }
}
