@testable import ATT
import BluetoothCore
import TestSupport

/// A client on a scripted bearer, with a short transaction timeout so a silent peer is
/// noticed quickly (the outcome is asserted, never the time taken).
func makeClient(
    _ script: [ScriptedBearer.Step], mtu: UInt16 = 23, timeout: Duration = unhurried,
    serverPDUHandler: (@Sendable (ATTPDU) -> Void)? = nil, logs: LogCapture? = nil
) -> (ATTClient, ScriptedBearer) {
    let bearer = ScriptedBearer(script, mtu: mtu)
    let logger = LogCapture.logger(ATTClient.defaultLogLabel, from: logs)
    return (ATTClient(bearer: bearer, transactionTimeout: timeout, serverPDUHandler: serverPDUHandler, logger: logger), bearer)
}

/// Runs `body` and returns its typed error, or nil when it succeeded.
func attError<T>(_ body: () async throws(ATTError) -> T) async -> ATTError? {
    do {
        _ = try await body()
        return nil
    } catch {
        return error
    }
}

/// Collects what subscribers are handed, for later inspection.
final class Collected<Element: Sendable>: Sendable {
    private let items = Lock<[Element]>([])
    func append(_ item: Element) { items.withLock { $0.append(item) } }
    var all: [Element] { items.withLock { $0 } }
}

/// Waits for a count a test hook reports to reach a number: the client's requests queued
/// behind the outstanding one (`ATTClient.observeQueue`), the server's answered requests
/// (`ATTServer.observeAnswers`). Tests order events with it instead of sleeping.
final class CountWatcher: Sendable {
    private let state = Lock<(count: Int, waiters: [(Int, CheckedContinuation<Void, Never>)])>((0, []))

    init(_ observe: (@escaping @Sendable (Int) -> Void) -> Void) {
        observe { [self] count in
            let ready = state.withLock { state in
                state.count = count
                let ready = state.waiters.filter { $0.0 <= count }.map(\.1)
                state.waiters.removeAll { $0.0 <= count }
                return ready
            }
            for waiter in ready { waiter.resume() }
        }
    }

    func wait(for count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state in
                if state.count >= count { return true }
                state.waiters.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }
}
