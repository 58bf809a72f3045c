import BluetoothCore
import Glibc

/// Lines produced by one thread and taken, with a deadline, by others: the virtual
/// radio's stdout. A pthread mutex and a CLOCK_MONOTONIC condition variable, because a
/// waiter must block without polling and `Lock` has no condition variable.
final class LineChannel: @unchecked Sendable {
    // All fields below are guarded by `mutex`.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var lines: [String] = []
    private var head = 0
    private var ended = false

    init() {
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    private func locked<T>(_ body: () -> T) -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return body()
    }

    func push(_ line: String) {
        locked {
            lines.append(line)
            pthread_cond_broadcast(condition)
        }
    }

    /// No more lines will come.
    func finish() {
        locked {
            ended = true
            pthread_cond_broadcast(condition)
        }
    }

    enum Outcome {
        case line(String)
        case ended
        case timedOut
    }

    /// The next line, waiting until `deadline` (monotonic nanoseconds).
    func next(until deadline: UInt64) -> Outcome {
        var limit = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        return locked {
            while true {
                if head < lines.count {
                    let line = lines[head]
                    head += 1
                    if head > 1024, head * 2 > lines.count {
                        lines.removeFirst(head)
                        head = 0
                    }
                    return .line(line)
                }
                if ended { return .ended }
                if pthread_cond_timedwait(condition, mutex, &limit) == ETIMEDOUT, head >= lines.count, !ended {
                    return .timedOut
                }
            }
        }
    }

    /// Waits until `finish()` or the deadline; true if finished.
    func waitForEnd(until deadline: UInt64) -> Bool {
        var limit = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        return locked {
            while !ended {
                if pthread_cond_timedwait(condition, mutex, &limit) == ETIMEDOUT { return ended }
            }
            return true
        }
    }
}
