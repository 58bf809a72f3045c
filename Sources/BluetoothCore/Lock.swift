#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A value that threads share, behind a pthread mutex.
///
/// Why not `Synchronization.Mutex`: on Linux it waits on a futex that ThreadSanitizer does
/// not intercept, so TSan saw no happens-before edge and reported every two-thread counter
/// behind it as a "Swift access race" (15 such reports in the unit suites, all false).
/// A pthread mutex is one TSan understands, so its reports can be trusted, and uncontended
/// it costs the same. Nothing is called out while it is held: callers keep callbacks,
/// continuations and I/O outside `withLock`.
public final class Lock<Value>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    public init(_ value: sending Value) {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        self.value = value
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value.
    public func withLock<Result, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
