#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Starting a pthread for the stack's own loops (transport readers, the deadline timer,
/// kernel socket waits), which must not borrow a thread of Swift's cooperative pool.
package enum PosixThread {
    package struct StartError: Error { package var code: Int32 }

    /// Starts a joinable pthread running `body`; returns it, or the pthread_create error.
    package static func start(_ body: @escaping @Sendable () -> Void) -> Result<pthread_t, StartError> {
        let context = Unmanaged.passRetained(ThreadBody(body)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { raw in
            guard let raw else { return nil }
            Unmanaged<ThreadBody>.fromOpaque(raw).takeRetainedValue().body()
            return nil
        }, context)
        guard result == 0 else {
            Unmanaged<ThreadBody>.fromOpaque(context).release()
            return .failure(StartError(code: result))
        }
        return .success(thread)
    }
}

private final class ThreadBody: Sendable {
    let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
}
