import BluetoothCore
import HCI

/// What a scanning subcommand reacts to.
public enum ScanRunEvent: Sendable {
    case advertisement(Advertisement)
    /// A `tickEvery` period has passed; the monotonic time in nanoseconds. Lets a live table
    /// redraw its ages, or a ranger close a period, while nothing arrives.
    case tick(UInt64)
}

/// The scan every scanning subcommand runs (central's scan; beacon's range, monitor,
/// calibrate): open the transport, power on, scan with `filter` until Ctrl-C, SIGTERM,
/// `duration` or the transport closing, and stop scanning on the controller before
/// returning, so the process never exits with the controller still scanning.
public enum ScanRun {
    /// `handle` runs for each event, in order; an error it throws ends the scan and is
    /// rethrown. `stopped` runs once scanning is off on the controller, before any error is
    /// thrown (a table gets its last draw even when scanning failed). Setup failures throw
    /// before either runs.
    public static func run(
        options: TransportOptions,
        filter: ScanFilter,
        active: Bool,
        useExtendedCommands: Bool? = nil,
        duration: Double?,
        tickEvery period: Duration?,
        handle: (ScanRunEvent) throws -> Void,
        stopped: () -> Void = {}
    ) async throws {
        let parameters: ScanParameters
        do {
            parameters = try ScanParameters(active: active, useExtendedCommands: useExtendedCommands)
        } catch {
            throw ToolError(error.description)
        }
        let controller = try await options.openPoweredController()
        defer { controller.close() }

        let (events, continuation) = AsyncStream.makeStream(of: ScanRunEvent.self, bufferingPolicy: .bufferingNewest(8192))
        // Ctrl-C, SIGTERM or `duration` end the loop below instead of the process, so
        // scanning is stopped on the controller before exit.
        let stop = StopRequest(after: duration) { continuation.finish() }
        defer { stop.cancel() }

        let scanner = Scanner(controller: controller)
        let session: ScanSession
        do {
            session = try await scanner.scan(matching: filter, parameters: parameters) { continuation.yield(.advertisement($0)) }
        } catch {
            throw ToolError("cannot start scanning: \(error)")
        }
        let watcher = Task {
            for await status in controller.statusUpdates() {
                if case .closed = status { continuation.finish() }
            }
        }
        defer { watcher.cancel() }
        let ticker: Task<Void, Never>? = period.map { period in
            Task {
                while !Task.isCancelled {
                    do { try await Task.sleep(for: period) } catch { return }
                    continuation.yield(.tick(MonotonicClock.nanoseconds()))
                }
            }
        }

        var failure: (any Error)?
        for await event in events {
            do {
                try handle(event)
            } catch {
                failure = error
                break
            }
        }
        ticker?.cancel()
        await session.stop()
        stopped()
        if let failure { throw failure }
        if let error = session.error { throw ToolError("scanning stopped: \(error)") }
    }
}
