import HCI
import BluetoothCore
@testable import SMP
import Testing
import TestSupport

/// The driver's waits on the one pending-answer primitive and its timers on the one
/// deadline timer: a cancelled wait returns at once, and nothing stays armed behind a wait
/// or a pairing that has ended.
@Suite("SMP driver: waits and timers")
struct SecurityManagerWaitTests {
    @Test("peripheral: a cancelled wait for the central returns at once, not at the SMP timeout")
    func cancelledPeripheralWait() async throws {
        let link = try await SMPLink.make(role: .peripheral)
        let manager = try link.manager(smpTimeout: .seconds(60))
        let pairing = Task { await pairingError { try await manager.pair() } }
        guard case .securityRequest = try await link.nextSent() else { Issue.record("no Security Request"); return }
        let clock = ContinuousClock()
        let start = clock.now
        pairing.cancel()
        let error = try await withDeadline("a cancelled pair() as peripheral", seconds: 10) { await pairing.value }
        #expect(error == .cancelled)
        #expect(clock.now - start < .seconds(30), "a cancelled wait returns at once, not at its 60 s deadline")
        #expect(manager.state.withLock { $0.waits.count } == 0)
    }

    @Test("a thousand cancelled waits for the peer leave no deadline armed")
    func cancelledWaitsLeaveNothingArmed() async throws {
        let link = try await SMPLink.make(role: .peripheral)
        let manager = try link.manager()
        for _ in 0..<1_000 {
            let waiting = Task { await pairingError { try await manager.nextPairingResult() } }
            await Task.yield()
            waiting.cancel()
            #expect(await waiting.value == .cancelled)
        }
        // Each wait that got as far as parking armed a 30 s deadline; every one was
        // cancelled with its wait. (The shared timer may hold other tests' deadlines.)
        #expect(DeadlineTimer.shared.armedCount < 600, "the shared timer also holds what the tests beside this one armed (118 at once seen in CI)")
        #expect(manager.state.withLock { $0.waits.count } == 0)
    }

    /// The observer is where the facade writes the bond (two fsyncs and a file lock): it
    /// must not run on the thread that delivered the PDU ending the pairing, which is the
    /// transport's reader for every link (issue 14: nothing blocking there).
    @Test("the pairing observer never runs on the transport's reader thread", arguments: [ConnectionRole.central, .peripheral])
    func observerLeavesTheReaderThread(role: ConnectionRole) async throws {
        let link = try await SMPLink.make(role: role)
        let onReader = Lock<[Bool]>([])
        let manager = try link.manager(observer: { _ in onReader.withLock { $0.append(ScriptedTransport.onDeliveryThread) } })
        let pairing = Task { await pairingError { role == .central ? try await manager.pair() : try await manager.nextPairingResult() } }
        if role == .central {
            guard case .pairingRequest = try await link.nextSent() else { Issue.record("no Pairing Request"); return }
            await link.peerSends(.pairingFailed(.pairingNotSupported))
        } else {
            // A request we refuse (a reserved IO capability) ends the pairing on the reader thread.
            var request = secureJustWorks
            request.ioCapability = IOCapability(rawValue: 9)
            await link.peerSends(.pairingRequest(request))
        }
        _ = try await withDeadline("the pairing's end", seconds: 10) { await pairing.value }
        #expect(onReader.withLock { $0 } == [false], "observer calls, each on the reader thread or not")
    }

    @Test("a pairing that ended leaves neither its SMP timer nor its deadline armed")
    func endedPairingLeavesNoTimer() async throws {
        let link = try await SMPLink.make(role: .central)
        let manager = try link.manager()
        let pairing = Task { await pairingError { try await manager.pair() } }
        guard case .pairingRequest = try await link.nextSent() else { Issue.record("no Pairing Request"); return }
        // Both timers run from the Pairing Request until the peer ends the pairing.
        #expect(manager.state.withLock { $0.timers.count } == 2)
        await link.peerSends(.pairingFailed(.pairingNotSupported))
        let error = try await withDeadline("a refused pair()", seconds: 10) { await pairing.value }
        #expect(error != nil)
        #expect(manager.state.withLock { $0.timers.isEmpty })
        #expect(manager.state.withLock { $0.waits.count } == 0)
    }
}
