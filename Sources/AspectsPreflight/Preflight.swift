import CAspectsABI
import Foundation
import AspectsCore
import AspectsRules

/// Which catalog functions a program really reaches through the dynamic linker, and which
/// rules can therefore never fire in it (`aspectctl preflight`).
package struct Preflight: Sendable {
    package struct Object: Sendable {
        package var path: String
        package var imports: Set<String>
        package var exports: Set<String> = []
        package var isSymbolic = false
    }

    package struct Finding: Sendable, Equatable {
        package enum Severity: String, Sendable { case note, warning }
        package var severity: Severity
        package var rule: String?
        package var message: String
    }

    package var binary: String
    package var objects: [Object]
    /// Whether the dynamic loader runs for the program, the only way LD_PRELOAD applies: it
    /// has a dynamic section and names the loader as its interpreter (PT_INTERP).
    package var isDynamic: Bool
    /// A static-pie (`cc -static-pie`, Debian's /sbin/ldconfig): a dynamic section, for
    /// relocating itself, but no interpreter, so it is static to LD_PRELOAD.
    package var isStaticPie: Bool
    package let catalog: Catalog

    /// Reads the program and the libraries the dynamic loader would load for it.
    package init(binary: String, catalog: Catalog = .builtIn) throws(AspectsError) {
        self.catalog = catalog
        self.binary = binary
        let main: ELFImports
        do { main = try ELFImports(path: binary) } catch {
            throw AspectsError(.noInput, field: "BINARY", "\(error)")
        }
        isDynamic = main.isDynamic && main.hasInterpreter
        isStaticPie = main.isDynamic && !main.hasInterpreter && main.isSharedObject
        var objects = [Object(path: binary, imports: main.imports, exports: main.exports, isSymbolic: main.isSymbolic)]
        if isDynamic {
            for lib in Self.libraries(of: binary) {
                // The preload itself is not part of the program.
                if (lib as NSString).lastPathComponent.hasPrefix("libaspects") { continue }
                if let elf = try? ELFImports(path: lib) {
                    objects.append(Object(path: lib, imports: elf.imports, exports: elf.exports, isSymbolic: elf.isSymbolic))
                }
            }
        }
        self.objects = objects
    }

    /// How `binary` alone is linked, without asking the loader for its libraries: what `run`
    /// needs to say that no preload can reach a program. nil when it is no ELF file (a script).
    package static func linkage(of binary: String) -> (isDynamic: Bool, isStaticPie: Bool)? {
        guard let main = try? ELFImports(path: binary) else { return nil }
        return (main.isDynamic && main.hasInterpreter, main.isDynamic && !main.hasInterpreter && main.isSharedObject)
    }

    /// The libraries of a dynamic executable, as its own dynamic loader resolves them
    /// (`ld.so --list`: the loader maps them but runs none of the program's code). A program
    /// of the other architecture (an aarch64 one here) is listed by its loader under
    /// qemu-user, where qemu is installed: the libraries are then the guest's.
    package static func libraries(of binary: String) -> [String] {
        guard let elf = try? ELFImports(path: binary) else { return [] }
        let loaders = ["/lib64/ld-linux-x86-64.so.2", "/lib/ld-linux-aarch64.so.1"]
        guard let loader = elf.interpreter.flatMap({ FileManager.default.isExecutableFile(atPath: $0) ? $0 : nil })
                ?? loaders.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else { return [] }
        // with a slash: a bare name would be searched for on the library path
        var command = [loader, "--list", binary.contains("/") ? binary : "./" + binary]
        if elf.machine != hostMachine {
            guard let qemu = qemuUser[elf.machine].flatMap({ q in ["/usr/bin/" + q, "/usr/local/bin/" + q].first { FileManager.default.isExecutableFile(atPath: $0) } })
            else { return [] }
            command.insert(qemu, at: 0)
        }
        var env = ProcessInfo.processInfo.environment
        env["LD_PRELOAD"] = nil
        guard let listed = try? Subprocess.run(command[0], Array(command.dropFirst()), environment: env) else { return [] }
        let data = listed.stdout
        return String(decoding: data, as: UTF8.self).split(separator: "\n").compactMap { line in
            // "\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)" or "\t/lib64/ld-linux-x86-64.so.2 (0x...)"
            let parts = line.split(separator: " ")
            if let arrow = parts.firstIndex(of: "=>"), arrow + 1 < parts.count, parts[arrow + 1].hasPrefix("/") { return String(parts[arrow + 1]) }
            if let first = parts.first, first.hasPrefix("/") { return String(first).trimmingCharacters(in: .whitespaces) }
            return nil
        }
    }

    /// This machine's ELF machine number, and qemu-user's program for each other one.
    #if arch(arm64)
    static let hostMachine = Int(ASPECTS_ELF_MACHINE_AARCH64)
    #else
    static let hostMachine = Int(ASPECTS_ELF_MACHINE_X86_64)
    #endif
    static let qemuUser = [Int(ASPECTS_ELF_MACHINE_X86_64): "qemu-x86_64-static", Int(ASPECTS_ELF_MACHINE_AARCH64): "qemu-aarch64-static"]

    /// How it is linked, as preflight says it: `dynamically linked, 3 libraries`,
    /// `statically linked`, `statically linked (static-pie: ...)`.
    package var linkage: String {
        if isDynamic { return "dynamically linked, \(objects.count - 1) libraries" }
        return isStaticPie ? "statically linked (static-pie: it relocates itself, the dynamic loader never runs)" : "statically linked"
    }

    /// Catalog names imported, with the objects that import each.
    package var catalogImports: [(name: String, importers: [String])] {
        catalog.functions.compactMap { f in
            let who = objects.filter { $0.imports.contains(f.name) }.map(\.path)
            return who.isEmpty ? nil : (f.name, who)
        }
    }

    /// What to say about each rule: a warning when it can never fire in this program.
    package func check(_ rules: [CompiledRule]) -> [Finding] {
        var findings: [Finding] = []
        if !isDynamic {
            findings.append(Finding(severity: .warning, rule: nil,
                                    message: "\(binary) is statically linked\(isStaticPie ? " (a static-pie)" : ""): LD_PRELOAD does not apply, no rule can fire"))
            return findings
        }
        var image: String?
        for c in rules {
            let label = c.rule.id.map { "rule \"\($0)\"" } ?? "rule on \(c.rule.symbol)"
            if let glob = c.rule.when.process {
                if image == nil { image = ProcessGlob.image(of: binary) }
                if !ProcessGlob.matches(glob, image: image!) {
                    findings.append(Finding(severity: .warning, rule: label,
                        message: "can never fire in this program: its process glob \"\(glob)\" does not match \(image!)\(image! == binary ? "" : " (what \(binary) runs)"), the path the preload matches"))
                    continue
                }
            }
            if let sig = c.prototype {
                findings += checkPrototype(sig.name, label: label)
                continue
            }
            let group = catalog.group(of: c.function)
            let names = group.members.map { catalog.functions[$0].name }
            let imported = names.filter { n in objects.contains { $0.imports.contains(n) } }
            if imported.isEmpty {
                findings.append(Finding(severity: .warning, rule: label,
                    message: "can never fire: neither the program nor its libraries import \(names.joined(separator: ", ")) (calls libc makes to itself cannot be advised)"))
            } else if !imported.contains(c.function.name) {
                findings.append(Finding(severity: .note, rule: label,
                    message: "the program calls \(imported.joined(separator: ", ")), not \(c.function.name); the rule applies to its whole alias group, so it fires"))
            }
        }
        return findings
    }

    /// A function advised from a prototype: the objects whose slots will be rewritten, and the
    /// calls that no slot carries.
    func checkPrototype(_ name: String, label: String) -> [Finding] {
        var out: [Finding] = []
        let importers = objects.filter { $0.imports.contains(name) }.map { ($0.path as NSString).lastPathComponent }
        let definers = objects.filter { $0.exports.contains(name) }
        if importers.isEmpty && definers.isEmpty {
            out.append(Finding(severity: .warning, rule: label, message: "can never fire: no object of the program imports or defines \(name)"))
        } else if importers.isEmpty {
            out.append(Finding(severity: .warning, rule: label, message: "can never fire: \(name) is defined in \(definers.map { ($0.path as NSString).lastPathComponent }.joined(separator: ", ")) but no object imports it"))
        } else {
            out.append(Finding(severity: .note, rule: label, message: "\(name) is imported by \(importers.joined(separator: ", ")): those calls are advised"))
        }
        if let main = objects.first, main.exports.contains(name) {
            out.append(Finding(severity: .note, rule: label, message: "the executable defines \(name): its own calls to it are bound directly and cannot be caught"))
        }
        for d in definers.dropFirst() where d.isSymbolic {
            out.append(Finding(severity: .note, rule: label, message: "\((d.path as NSString).lastPathComponent) is linked -Bsymbolic: its own calls to \(name) cannot be caught"))
        }
        return out
    }
}
