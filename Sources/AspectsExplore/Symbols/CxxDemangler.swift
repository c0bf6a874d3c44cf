import Foundation

/// C++ names as `nm -C` wrote them, by the C++ runtime's `__cxa_demangle` (libstdc++, found
/// with dlopen rather than linked: aspectctl links no C++ runtime of its own, and a machine
/// without libstdc++ has no C++ programs to name). A name it cannot demangle stays as it is.
enum CxxDemangler {
    typealias Demangle =
        @convention(c) (
            UnsafePointer<CChar>?, UnsafeMutablePointer<CChar>?, UnsafeMutablePointer<Int>?, UnsafeMutablePointer<Int32>?
        ) -> UnsafeMutablePointer<CChar>?

    static let function: Demangle? = {
        for library in ["libstdc++.so.6", "libc++abi.so.1"] {
            let handle = dlopen(library, RTLD_LAZY | RTLD_NOLOAD) ?? dlopen(library, RTLD_LAZY)
            if let handle, let symbol = dlsym(handle, "__cxa_demangle") { return unsafeBitCast(symbol, to: Demangle.self) }
        }
        return nil
    }()

    static func demangle(_ name: String) -> String {
        guard name.hasPrefix("_Z"), let function else { return name }
        var status: Int32 = -1
        guard let out = function(name, nil, nil, &status) else { return name }
        defer { free(out) }
        return status == 0 ? String(cString: out) : name
    }
}
