import BluetoothCore

/// Lines produced by one thread and taken, with a deadline, by others: the virtual
/// radio's stdout. A waiter blocks without polling, so a condition variable, which `Lock`
/// does not have.
final class LineChannel: @unchecked Sendable {
    /// Guards the fields below.
    private let condition = MonotonicCondition()
    private var lines: [String] = []
    private var head = 0
    private var ended = false

    private func locked<T>(_ body: () -> T) -> T { condition.locked(body) }

    func push(_ line: String) {
        locked {
            lines.append(line)
            condition.broadcast()
        }
    }

    /// No more lines will come.
    func finish() {
        locked {
            ended = true
            condition.broadcast()
        }
    }

    enum Outcome {
        case line(String)
        case ended
        case timedOut
    }

    /// The next line, waiting until `deadline` (monotonic nanoseconds).
    func next(until deadline: UInt64) -> Outcome {
        locked {
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
                if !condition.wait(until: deadline), head >= lines.count, !ended {
                    return .timedOut
                }
            }
        }
    }

    /// Waits until `finish()` or the deadline; true if finished.
    func waitForEnd(until deadline: UInt64) -> Bool {
        locked {
            while !ended {
                if !condition.wait(until: deadline) { return ended }
            }
            return true
        }
    }
}
