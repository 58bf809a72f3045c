#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A pthread mutex and a condition variable whose timed waits run on ``MonotonicClock``
/// (a wall-clock step neither cuts a wait short nor stretches it): for the few threads
/// that must sleep until another wakes them, where ``Lock`` has no way to wait. The owner
/// keeps its state beside it and touches that state only between ``lock()`` and
/// ``unlock()`` (or inside ``locked(_:)``).
package final class MonotonicCondition: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>

    package init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        condition.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    package func lock() { pthread_mutex_lock(mutex) }
    package func unlock() { pthread_mutex_unlock(mutex) }

    package func locked<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// With the mutex held: releases it until woken (or spuriously), then holds it again.
    package func wait() { pthread_cond_wait(condition, mutex) }

    /// With the mutex held: as ``wait()``, but no later than `deadline` (``MonotonicClock``
    /// nanoseconds). False when the deadline has passed.
    @discardableResult
    package func wait(until deadline: UInt64) -> Bool {
        guard MonotonicClock.nanoseconds() < deadline else { return false }
        var until = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        return pthread_cond_timedwait(condition, mutex, &until) != ETIMEDOUT
    }

    /// Wakes every waiter (call with the mutex held, or not).
    package func broadcast() { pthread_cond_broadcast(condition) }
    /// Wakes one waiter.
    package func signal() { pthread_cond_signal(condition) }
}
