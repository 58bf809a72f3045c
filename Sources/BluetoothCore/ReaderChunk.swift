#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Work a transport's reader thread puts off until it has handled the whole chunk it read.
///
/// A chunk (one read()) may hold a thousand advertising reports. A consumer task that is
/// told of each as it comes keeps up, sleeps again and is woken again, one thread wake-up
/// per report, each costing the reader more than the report; told once at the end of the
/// chunk, it takes the thousand in one batch. The delay is bounded by the chunk's own
/// handling.
public enum ReaderChunk {
    /// Runs `action` when this thread, a transport's reader handling a chunk, has finished
    /// it; at once on any other thread, or between chunks.
    public static func atEnd(_ action: @escaping () -> Void) {
        guard let pending = current(), pending.handling else {
            action()
            return
        }
        pending.actions.append(action)
    }

    /// The reader thread starts handling a chunk.
    package static func begin() {
        let pending = current() ?? install()
        pending.handling = true
    }

    /// The reader thread has handled the chunk: what was put off runs now, in order.
    package static func end() {
        guard let pending = current() else { return }
        pending.handling = false
        guard !pending.actions.isEmpty else { return }
        var actions: [() -> Void] = []
        swap(&actions, &pending.actions)
        for action in actions { action() }
        // Give the storage back for the next chunk (an action may have put off more: none
        // is, outside a chunk, so the list is empty here).
        actions.removeAll(keepingCapacity: true)
        swap(&actions, &pending.actions)
    }

    /// One reader thread's state, reached through a thread-specific key and released with
    /// the thread.
    private final class Pending {
        var handling = false
        var actions: [() -> Void] = []
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key) { pointer in
            if let pointer { Unmanaged<AnyObject>.fromOpaque(pointer).release() }
        }
        return key
    }()

    private static func current() -> Pending? {
        guard let pointer = pthread_getspecific(key) else { return nil }
        return Unmanaged<Pending>.fromOpaque(pointer).takeUnretainedValue()
    }

    private static func install() -> Pending {
        let pending = Pending()
        pthread_setspecific(key, Unmanaged.passRetained(pending).toOpaque())
        return pending
    }
}
