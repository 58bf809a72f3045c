import Glibc

/// Items handed over from a reader thread (a transport's, the kernel host's management
/// channel's), awaited with a deadline.
public final class Inbox<Item: Sendable>: @unchecked Sendable {
    // Guarded by `mutex`.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var items: [Item] = []

    public init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
        condition.deallocate()
    }

    public func put(_ item: Item) {
        pthread_mutex_lock(mutex)
        items.append(item)
        pthread_cond_broadcast(condition)
        pthread_mutex_unlock(mutex)
    }

    public var snapshot: [Item] {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return items
    }

    /// Waits until at least `count` items arrived or `seconds` passed; returns them all.
    public func wait(for count: Int, seconds: Int = 5) -> [Item] {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var deadline = timespec(tv_sec: now.tv_sec + seconds, tv_nsec: now.tv_nsec)
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while items.count < count {
            if pthread_cond_timedwait(condition, mutex, &deadline) == ETIMEDOUT { break }
        }
        return items
    }
}
