import Foundation
import Testing

/// The `.fast` tag is checked, not trusted: a test that carries it and starts a program has an
/// issue naming the program (TestProcess.noteStart).
@Suite(.tags(.fast)) struct FastTagTests {
    @Test func aFastTestThatStartsAProgramFails() throws {
        try withKnownIssue("a .fast test started /bin/true") {
            _ = try Proc.run("/bin/true")
        } matching: { issue in
            issue.comments.contains { $0.rawValue.contains("tagged .fast but started /bin/true") }
        }
    }
}
