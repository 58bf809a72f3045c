import BluetoothCore
import HCI
@testable import L2CAP
import Testing
import TestSupport

/// A controller that keeps its ACL buffers full (it never reports Number Of Completed
/// Packets, as when the peer stops acknowledging our link-layer packets) while the peer
/// keeps talking: what the host queues for the controller must stay bounded.
@Suite struct OutgoingBoundTests {
    static let handle: UInt16 = 0x40

    /// PDUs queued for the controller on `handle` (sent fragments' PDUs included until done).
    static func queued(_ harness: L2CAPHarness, _ handle: UInt16 = handle) -> Int {
        harness.manager.state.withLock { $0.connections[handle]?.outgoing.count ?? 0 }
    }

    /// `count` signaling commands of an unknown code, each of which provokes a Command Reject.
    static func flood(_ harness: L2CAPHarness, commands count: Int, handle: UInt16 = handle) async {
        var sent = 0
        while sent < count {
            let batch = (sent..<min(count, sent + 5_000)).map { index in
                let command = SignalingCommand(code: SignalingCode(rawValue: 0x7F), identifier: UInt8(index % 255 + 1), data: [])
                return ACLDataPacket(connectionHandle: handle, packetBoundary: .firstFlushable,
                                     data: BasicFrame(channelID: .leSignaling, payload: command.encode()).encode())
            }
            await harness.inject(batch)
            sent += batch.count
        }
    }

    @Test func rejectsProvokedWhileCreditsAreWithheldAreBoundedThenTheLinkRecovers() async throws {
        let harness = try await L2CAPHarness.make(aclCount: 4)
        await harness.connect(Self.handle)
        await Self.flood(harness, commands: 300_000)
        // The controller's four buffers took the first four rejects, then it stopped.
        for _ in 0..<4 { _ = try await harness.log.nextACL() }
        let queued = Self.queued(harness)
        #expect(queued <= ChannelManager.Configuration().outgoingLimit.answers)
        #expect(harness.manager.statistics.commandRejectsSent == queued + 4)
        #expect(harness.manager.statistics.answersDroppedForFullQueue == 300_000 - queued - 4)

        // The peer's flood does not take the host's room: our own PDU is still accepted.
        let own = Task { try await harness.manager.send([0x12, 0x34], cid: .attributeProtocol, connection: Self.handle) }
        try await withDeadline("the host's PDU to queue") {
            while Self.queued(harness) == queued { await Task.yield() }
        }
        // The controller catches up: the queued rejects leave, then our own PDU.
        await harness.complete(Self.handle, 4)
        for _ in 0..<queued {
            let packet = try await harness.log.nextACL()
            #expect(try BasicFrame(decoding: packet.data).channelID == .leSignaling)
            await harness.complete(packet.connectionHandle)
        }
        let packet = try await harness.log.nextACL()
        #expect(try BasicFrame(decoding: packet.data).payload == [0x12, 0x34])
        await harness.complete(Self.handle)
        try await own.value
        #expect(harness.manager.statistics.sendsRefusedForFullQueue == 0)
    }

    /// Submits `payload`; the error when it is refused at once, nil when queued.
    static func submitNow(_ harness: L2CAPHarness, _ payload: [UInt8]) -> L2CAPError? {
        do {
            try harness.manager.submit(payload, cid: .attributeProtocol, connection: handle)
            return nil
        } catch {
            return error
        }
    }

    @Test func theHostsOwnSendsAreRefusedAtThePDUBoundAndAcceptedOnceOneLeaves() async throws {
        let limit = OutgoingLimit(hostPDUs: 8, hostBytes: 10_000, answers: 2)
        let harness = try await L2CAPHarness.make(aclCount: 1, configuration: .init(outgoingLimit: limit))
        await harness.connect(Self.handle)
        #expect(Self.submitNow(harness, [0]) == nil)
        _ = try await harness.log.nextACL() // in the controller's only buffer: no longer queued
        for index in 1...8 { #expect(Self.submitNow(harness, [UInt8(index)]) == nil) }
        #expect(Self.submitNow(harness, [9]) == .outgoingQueueFull(queuedPDUs: 8, queuedBytes: 8))
        #expect(harness.manager.statistics.sendsRefusedForFullQueue == 1)
        await harness.complete(Self.handle)
        #expect(try BasicFrame(decoding: try await harness.log.nextACL().data).payload == [1])
        #expect(Self.submitNow(harness, [9]) == nil)
    }

    @Test func theHostsOwnSendsAreRefusedAtTheByteBoundButAnEmptyQueueTakesAnySize() async throws {
        let limit = OutgoingLimit(hostPDUs: 8, hostBytes: 100, answers: 2)
        let harness = try await L2CAPHarness.make(aclCount: 1, configuration: .init(outgoingLimit: limit))
        await harness.connect(Self.handle)
        #expect(Self.submitNow(harness, [0]) == nil)
        _ = try await harness.log.nextACL()
        // Alone, a PDU longer than the byte bound still goes: the bound caps a backlog.
        #expect(Self.submitNow(harness, Array(repeating: 1, count: 300)) == nil)
        #expect(Self.submitNow(harness, [2]) == .outgoingQueueFull(queuedPDUs: 1, queuedBytes: 300))
    }

    @Test func theHostsOwnSignalingRequestFailsAtTheBound() async throws {
        let limit = OutgoingLimit(hostPDUs: 1, hostBytes: 10_000, answers: 2)
        let harness = try await L2CAPHarness.make(aclCount: 1, configuration: .init(outgoingLimit: limit))
        await harness.connect(Self.handle, role: .peripheral)
        #expect(Self.submitNow(harness, [0]) == nil)
        _ = try await harness.log.nextACL()
        #expect(Self.submitNow(harness, [1]) == nil)
        let request = ConnectionParameterUpdateRequest(intervalMin: 24, intervalMax: 40, peripheralLatency: 0, timeoutMultiplier: 600)
        await #expect(throws: L2CAPError.outgoingQueueFull(queuedPDUs: 1, queuedBytes: 1)) {
            try await harness.manager.requestConnectionParameterUpdate(request, connection: Self.handle)
        }
    }
}
