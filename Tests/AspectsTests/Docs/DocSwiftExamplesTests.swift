// The Swift example of docs/testing.md, verbatim (DocExamplesTests checks that it is): it
// compiles and passes here as it would in a package that depends on aspects.
// Package.swift: .package(url: "https://…/aspects", from: "0.1.0"),
//   .testTarget(name: "MyTests", dependencies: [.product(name: "AspectsTesting", package: "aspects")])
import Foundation
import Testing
import AspectsTesting

@Test func aFullDiskIsReported() throws {
    let image = NSTemporaryDirectory() + "disk-\(UUID()).img"
    defer { try? FileManager.default.removeItem(atPath: image) }
    let r = try Aspects.run(["dd", "if=/dev/zero", "of=\(image)", "bs=4k", "count=8"],
                            rules: [.instead("write", .fail("ENOSPC"), when: .nth(3), .argFdPath(0, "*.img"), id: "disk")])
    #expect(r.status == 1 && r.fired("disk") == 1)
    #expect(r.sites["disk"]?.sites.first?.site.object == "dd")   // where it fired: dd's own write
}

@Test func aProgramSeesADeniedFile() throws {
    let table = try LiveTable()
    let token = try table.add([.instead("open", .fail("EACCES"), when: .argGlob(0, "*.db"), id: "deny")])[0]
    let db = NSTemporaryDirectory() + "app-\(UUID()).db"
    FileManager.default.createFile(atPath: db, contents: Data("data".utf8))
    defer { try? FileManager.default.removeItem(atPath: db) }
    let app = Process()                          // a program the test starts itself: a server, here cat
    app.executableURL = URL(fileURLWithPath: "/bin/cat")
    app.arguments = [db]
    app.standardError = FileHandle.nullDevice
    // LD_PRELOAD and ASPECTS_TABLE; environment() throws when libaspects.so cannot be found or built
    app.environment = ProcessInfo.processInfo.environment.merging(try table.environment()) { $1 }
    try app.run()
    app.waitUntilExit()
    #expect(app.terminationStatus == 1 && table.stats()["deny"]?.fired == 1)
    try token.remove()                           // removes exactly that rule (AspectToken)
}
