import ArgumentParser
import AspectsCore
import Foundation

/// Runs a command body, turning an AspectsError into a message and a sysexits status.
func guarded(_ body: () throws -> Void) throws {
    do {
        try body()
    } catch let e as AspectsError {
        Console.write("aspectctl: error: \(e)\n")
        throw ExitCode(e.exitStatus)
    }
}

extension AspectsError {
    /// sysexits(3)-style exit status of the CLI.
    var exitStatus: Int32 {
        switch code {
        case .usage, .badTableName: return 64              // EX_USAGE
        case .noTable, .noInput: return 66                  // EX_NOINPUT
        case .tableExists: return 73                        // EX_CANTCREAT
        case .output: return 74                             // EX_IOERR
        case .tableFull, .groupFull, .tableBusy: return 75  // EX_TEMPFAIL
        case .system: return 71                             // EX_OSERR
        default: return 65                                  // EX_DATAERR: bad rules, bad table contents
        }
    }
}
