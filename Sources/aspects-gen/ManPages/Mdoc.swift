import Foundation

/// Text made safe for mdoc(7) and groff: every line a text line or a macro line, never an
/// accidental request, and ASCII only (other characters as groff's \[uXXXX], so no encoding
/// has to be guessed by whoever formats the page).
enum Mdoc {
    /// One line of running text; `code` spans read as ‘code’.
    static func text(_ line: String) -> String {
        var open = false
        return guarded(escaped(line, quoting: true, open: &open))
    }

    /// A macro argument: quoted, so that a word that happens to be a macro name stays a word.
    static func arg(_ word: String) -> String {
        var open = false
        return "\"" + escaped(word, quoting: true, open: &open).replacingOccurrences(of: "\"", with: "\\(dq") + "\""
    }

    /// Prose as the argument parser and the hand-written files hold it: paragraphs separated by
    /// blank lines; lines indented by two or more spaces are literal displays (command lines).
    static func prose(_ body: String) -> [String] {
        var out: [String] = []
        var literal = false
        var blankBefore = false
        var quoteOpen = false  // a `code` span may go on over a line break of its paragraph
        for raw in body.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if raw.trimmingCharacters(in: .whitespaces).isEmpty {
                blankBefore = !out.isEmpty
                quoteOpen = false
                continue
            }
            let isCode = raw.hasPrefix("  ")
            if isCode != literal {
                if literal { out.append(".Ed") }
                if isCode { out.append(".Bd -literal -offset indent") } else if !out.isEmpty { out.append(".Pp") }
                literal = isCode
            } else if blankBefore {
                // an empty line inside a display, a new paragraph outside one
                out.append(literal ? "\\&" : ".Pp")
            }
            blankBefore = false
            out.append(guarded(isCode ? escaped(String(raw.dropFirst(2)), quoting: false, open: &quoteOpen) : escaped(raw, quoting: true, open: &quoteOpen)))
        }
        if literal { out.append(".Ed") }
        return out
    }

    /// `quoting`: backticks open and close `code` spans (`open`: whether one is open), rather
    /// than being themselves.
    private static func escaped(_ line: String, quoting: Bool, open: inout Bool) -> String {
        var out = ""
        for scalar in line.unicodeScalars {
            switch scalar {
            case "\\": out += "\\e"
            case "`" where quoting:
                out += open ? "\\(cq" : "\\(oq"
                open.toggle()
            case _ where scalar.value < 0x80: out.unicodeScalars.append(scalar)
            // groff's own names, which every output device can draw (in a C locale a \[u2026]
            // has no glyph on the ascii device and man --warnings says so)
            case "\u{2026}": out += "..."
            case "\u{2014}": out += "\\(em"
            case "\u{2013}": out += "\\(en"
            case "\u{00D7}": out += "\\(mu"
            case "\u{2264}": out += "\\(<="
            case "\u{2265}": out += "\\(>="
            case "\u{2192}": out += "\\(->"
            default:
                let hex = String(scalar.value, radix: 16, uppercase: true)
                out += "\\[u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex + "]"
            }
        }
        return out
    }

    /// A line starting with . or ' would be a request, one starting with a blank a break.
    private static func guarded(_ line: String) -> String {
        guard let first = line.first, first == "." || first == "'" || first == " " else { return line }
        return "\\&" + line
    }
}
