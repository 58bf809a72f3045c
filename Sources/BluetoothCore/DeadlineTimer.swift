#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs actions at deadlines, on one thread of its own, and forgets a cancelled one at once.
///
/// Why not a `Task.sleep` per deadline: on Linux a cancelled sleep keeps its memory
/// (~0.75 KiB) until the deadline it was sleeping towards, so a stack that arms a 30 s
/// deadline for every ATT request and answers in a millisecond held ~34 KiB per explored
/// device for 30 s (seen in `bareble-bench soak`), and a flood of requests held megabytes.
/// Here a deadline is an entry in a heap; cancelling removes its action at once, and the
/// heap is compacted whenever most of it is cancelled entries, so memory follows the
/// deadlines that are still armed.
///
/// Actions run on the timer thread, one after another: they must be short and must not
/// block (take a lock, resume a continuation, hand work to a task).
package final class DeadlineTimer: @unchecked Sendable {
    /// One timer thread serves the whole process, as one reader thread serves a transport:
    /// deadlines are rare events next to the traffic they guard.
    package static let shared = DeadlineTimer()

    /// Identifies an armed deadline, for ``cancel(_:)``.
    package struct Token: Sendable, Hashable {
        fileprivate let id: UInt64
    }

    private struct Entry {
        let deadline: ContinuousClock.Instant
        let id: UInt64
    }

    /// Guards the fields below; wakes the thread when an earlier deadline arrives.
    private let condition = MonotonicCondition()
    private var heap: [Entry] = []
    private var actions: [UInt64: @Sendable () -> Void] = [:]
    private var nextID: UInt64 = 1
    private var threadStarted = false

    /// The process uses ``shared``; a test makes its own to count only its own deadlines
    /// (the shared one holds whatever the tests beside it armed). Its thread, started by
    /// the first deadline, lives as long as the process.
    package init() {}

    /// Runs `action` once `deadline` has passed, unless cancelled first.
    @discardableResult
    package func schedule(at deadline: ContinuousClock.Instant, _ action: @escaping @Sendable () -> Void) -> Token {
        condition.lock()
        let id = nextID
        nextID += 1
        actions[id] = action
        push(Entry(deadline: deadline, id: id))
        if !threadStarted {
            threadStarted = true
            // The one thread lives as long as the process, as `shared` does.
            if case .failure = PosixThread.start({ [self] in run() }) {
                // No thread (out of resources): deadlines would never fire, which is the
                // hang every deadline exists to prevent.
                fatalError("BareBLE could not start its deadline timer thread")
            }
        }
        if heap.first?.id == id { condition.signal() }
        condition.unlock()
        return Token(id: id)
    }

    /// Runs `action` after `duration`, unless cancelled first.
    @discardableResult
    package func schedule(after duration: Duration, _ action: @escaping @Sendable () -> Void) -> Token {
        schedule(at: .now + duration, action)
    }

    /// Forgets the deadline: its action will not run (unless it is running already).
    package func cancel(_ token: Token) {
        condition.lock()
        actions[token.id] = nil
        // Cancelled entries are skipped when they reach the top; rebuilding when they are
        // most of the heap keeps it proportional to the armed deadlines.
        if heap.count > 64, heap.count > 2 * actions.count {
            heap = heap.filter { actions[$0.id] != nil }
            heapify()
        }
        condition.unlock()
    }

    /// Deadlines armed and not yet run or cancelled.
    package var armedCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return actions.count
    }

    private func run() {
        condition.lock()
        while true {
            guard let first = heap.first else {
                condition.wait()
                continue
            }
            guard actions[first.id] != nil else {
                pop()
                continue
            }
            let remaining = ContinuousClock.now.duration(to: first.deadline)
            if remaining > .zero {
                condition.wait(until: MonotonicClock.nanoseconds() &+ MonotonicClock.nanoseconds(in: remaining))
                continue
            }
            pop()
            let action = actions.removeValue(forKey: first.id)
            condition.unlock()
            action?()
            condition.lock()
        }
    }

    // MARK: Binary heap on (deadline, id)

    private static func precedes(_ a: Entry, _ b: Entry) -> Bool {
        a.deadline < b.deadline || (a.deadline == b.deadline && a.id < b.id)
    }

    private func push(_ entry: Entry) {
        heap.append(entry)
        siftUp(heap.count - 1)
    }

    private func pop() {
        let last = heap.removeLast()
        guard !heap.isEmpty else { return }
        heap[0] = last
        siftDown(0)
    }

    private func heapify() {
        for index in stride(from: heap.count / 2 - 1, through: 0, by: -1) { siftDown(index) }
    }

    private func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard Self.precedes(heap[child], heap[parent]) else { return }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private func siftDown(_ start: Int) {
        var parent = start
        while true {
            var smallest = parent
            let left = 2 * parent + 1, right = left + 1
            if left < heap.count, Self.precedes(heap[left], heap[smallest]) { smallest = left }
            if right < heap.count, Self.precedes(heap[right], heap[smallest]) { smallest = right }
            guard smallest != parent else { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
