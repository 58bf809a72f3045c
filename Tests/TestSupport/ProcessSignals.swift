import Foundation
import Glibc

extension Process {
    /// `run()` with no signal blocked in the child, as a shell would start it: Process
    /// spawns from the calling thread and passes on its signal mask, and Swift's worker
    /// threads block SIGTERM, SIGINT and most others. A tool under test must get the
    /// SIGTERM or SIGINT a test sends as a user's would reach it (HCITransport's
    /// ChildProcess does the same for the stack's own children).
    public func runWithSignalsUnblocked() throws {
        var none = sigset_t()
        sigemptyset(&none)
        var previous = sigset_t()
        pthread_sigmask(SIG_SETMASK, &none, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        try run()
    }
}
