import ArgumentParser
import AspectsTable
import Foundation

/// `--lock-timeout`, on every command that can write a table: how long a writer waits for the
/// table's lock while another process holds it (TableLock), before exit 75.
struct LockOptions: ParsableArguments {
    @Option(name: .customLong("lock-timeout"), help: ArgumentHelp("Seconds to wait for a table another writer has locked (who holds it is said on stderr); 0 fails at once. Then exit 75.", valueName: "seconds"))
    var lockTimeout: Double = TableLock.timeout

    func validate() throws {
        guard lockTimeout >= 0, lockTimeout <= 86_400 else { throw ValidationError("--lock-timeout takes 0 to 86400 seconds, not \(lockTimeout)") }
    }

    /// Makes it the policy of every table this process writes.
    func apply() {
        TableLock.timeout = lockTimeout
        TableLock.onWait = { Console.write("aspectctl: " + $0 + "\n") }
    }
}
