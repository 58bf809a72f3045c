import BluetoothCore

/// A running scan started with ``Scanner/scan(matching:parameters:onAdvertisement:)``.
/// Scanning for it goes on until ``stop()`` (or until the session is released, which stops
/// it in the background).
public final class ScanSession: Sendable {
    let scanner: Scanner
    let id: UInt64
    private let state = Lock<(stopped: Bool, error: HCIError?)>((false, nil))

    init(scanner: Scanner, id: UInt64) {
        self.scanner = scanner
        self.id = id
    }

    /// Stops delivering to this session. Advertisements still held for a scan response are
    /// handed to the handler first (on the calling thread); when this was the last
    /// consumer the controller's scanning is disabled before this returns.
    public func stop() async {
        let first = state.withLock { state in
            defer { state.stopped = true }
            return !state.stopped
        }
        if first { await scanner.removeConsumer(id) }
    }

    /// Why scanning ended for this session without ``stop()``: the controller refused a
    /// restart, or the transport closed. nil while it runs.
    public var error: HCIError? { state.withLock { $0.error } }

    func fail(_ error: HCIError) {
        state.withLock { state in
            state.stopped = true
            state.error = error
        }
    }

    deinit {
        let stopped = state.withLock { $0.stopped }
        guard !stopped else { return }
        let scanner = scanner
        let id = id
        Task { await scanner.removeConsumer(id) }
    }
}
