// Records the size of every write a program makes: an `after` advice on write (write-sizes.json),
// so it sees what the original returned. One line per call — "fd count written" — appended to
// the file $WRITE_SIZES names, or to stderr.
//
// The writes this function makes are not advised (calls advice makes never are), so it can log
// with write itself. Loading it brings the Swift runtime into the advised program
// (docs/advice.md): advise with it programs that do not write from signal handlers.
import AspectsAdvice
#if canImport(Glibc)
import Glibc
#endif

/// The log, opened on the first call (swift_once: once per process, whichever thread is first).
let log: Int32 = {
    guard let path = getenv("WRITE_SIZES") else { return 2 }
    let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
    return fd >= 0 ? fd : 2
}()

@_cdecl("record_write_size")
public func recordWriteSize(_ raw: OpaquePointer) {
    let call = Invocation(raw)
    let line = "\(call.int(0)) \(call.int(2)) \(call.returnInt)\n"
    // O_APPEND and one write per line: lines of several processes do not interleave
    _ = line.withCString { write(log, $0, strlen($0)) }
}
