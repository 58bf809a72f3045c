import BluetoothCore

/// How a transport's reader thread waits for the controller's next bytes.
public enum ReaderWait: Sendable, Hashable {
    /// Sleep in poll() until the descriptor is readable (the default): no CPU while the
    /// controller is quiet, but every packet after a quiet moment pays the kernel's
    /// wake-up of the thread, tens of microseconds on a loaded machine.
    case blocking
    /// After each read, keep trying non-blocking reads for `window` before sleeping in
    /// poll(): a packet that comes within the window is read by a thread that is already
    /// running. The cost is a core kept busy for the window after every packet, so the
    /// whole core whenever packets come closer together than the window. Worth it only
    /// with a core to spare (see the README on pinning and real-time priority).
    case spinning(window: Duration)

    /// The spin window in nanoseconds; 0 when blocking.
    var spinNanoseconds: UInt64 {
        guard case let .spinning(window) = self else { return 0 }
        return MonotonicClock.nanoseconds(in: window)
    }
}
