import BluetoothCore
import Glibc
import HCI
import ToolSupport

/// What the scanning subcommands (range, monitor, calibrate) react to.
enum BeaconScanEvent: Sendable {
    case advertisement(Advertisement)
    /// One ranging period has passed.
    case tick(UInt64)
}

/// The scanning loop the ranging subcommands share: passive scanning with every report
/// delivered (ranging needs each one as a sample; the controller's duplicate filter would
/// leave one per device), a tick every period, and a clean stop on Ctrl-C, SIGTERM or
/// `duration`: scanning is disabled on the controller before the process exits.
enum BeaconScan {
    static let period: Duration = .seconds(1)

    static func run(options: TransportOptions, duration: Double?, handle: (BeaconScanEvent) throws -> Void) async throws {
        if let duration, !(duration.isFinite && duration > 0 && duration < 1e7) {
            throw ToolError("--duration \(duration) is not a positive number of seconds")
        }
        let parameters: ScanParameters
        do {
            parameters = try ScanParameters(active: false)
        } catch {
            throw ToolError(error.description)
        }
        let controller = try options.openController()
        defer { controller.close() }
        do {
            try await controller.powerOn()
        } catch {
            throw ToolError(error.description)
        }
        let (events, continuation) = AsyncStream.makeStream(of: BeaconScanEvent.self, bufferingPolicy: .bufferingNewest(8192))
        let stop = StopRequest(after: duration) { continuation.finish() }
        defer { stop.cancel() }
        let scanner = Scanner(controller: controller)
        let session: ScanSession
        do {
            session = try await scanner.scan(matching: ScanFilter(duplicates: .all), parameters: parameters) { advertisement in
                continuation.yield(.advertisement(advertisement))
            }
        } catch {
            throw ToolError("cannot start scanning: \(error)")
        }
        let watcher = Task {
            for await status in controller.statusUpdates() {
                if case .closed = status { continuation.finish() }
            }
        }
        defer { watcher.cancel() }
        let ticker = Task {
            while !Task.isCancelled {
                do { try await Task.sleep(for: period) } catch { return }
                continuation.yield(.tick(MonotonicClock.nanoseconds()))
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
        ticker.cancel()
        await session.stop()
        if let failure { throw failure }
        if let error = session.error { throw ToolError("scanning stopped: \(error)") }
    }
}
