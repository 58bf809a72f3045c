@testable import ATT
import BluetoothCore
import HCI
@testable import L2CAP
import Testing
import TestSupport

/// The ATT bearer on the LE fixed channel through our own L2CAP and a scripted controller.
@Suite struct L2CAPBearerTests {
    static let handle: UInt16 = 0x0040

    /// Credits come back at once (flow control is L2CAP's own tests' concern) and one LE
    /// connection is up.
    static func connectedHarness() async throws -> L2CAPHarness {
        let harness = try await L2CAPHarness.make(returnsCreditsAtOnce: true)
        await harness.connect(handle)
        return harness
    }

    @Test func aRequestLeavesAsOneACLPacketOnChannel4AndAFragmentedResponseReassembles() async throws {
        let harness = try await Self.connectedHarness()
        let client = ATTClient(bearer: L2CAPBearer(manager: harness.manager, connection: Self.handle))
        let value = Array(UInt8(1)...UInt8(22))
        let read = Task { try await client.read(0x0003).attributeValue }
        let request = try await harness.log.nextACL()
        #expect(request.connectionHandle == 0x0040)
        #expect(request.packetBoundary == .firstNonFlushable)
        // B-frame: length 3, CID 0x0004, Read Request for handle 0x0003.
        #expect(Hex.string(request.data, separator: " ") == "03 00 04 00 0A 03 00")
        // Read Response (23 bytes) in a 27-byte B-frame, split 10 + 17 by the peer.
        let frame = BasicFrame(channelID: .attributeProtocol, payload: [0x0B] + value).encode()
        await harness.inject([
            ACLDataPacket(connectionHandle: 0x0040, packetBoundary: .firstFlushable, data: Array(frame[..<10])),
            ACLDataPacket(connectionHandle: 0x0040, packetBoundary: .continuing, data: Array(frame[10...])),
        ])
        #expect(try await read.value == value)
    }

    @Test func aDisconnectionFailsEveryPendingRequestWithTheHCIReason() async throws {
        let harness = try await Self.connectedHarness()
        let client = ATTClient(bearer: L2CAPBearer(manager: harness.manager, connection: Self.handle))
        let first = Task { await attError { () async throws(ATTError) in try await client.read(0x0003) } }
        _ = try await harness.log.nextACL()
        let second = Task { await attError { () async throws(ATTError) in try await client.read(0x0005) } }
        let queued = CountWatcher(client.observeQueue)
        try await withDeadline("the second request to queue") { await queued.wait(for: 1) }
        await harness.disconnect(Self.handle, reason: .connectionTimeout)
        let reason = ATTBearerError.disconnected(reason: HCIErrorCode.connectionTimeout.rawValue)
        #expect(await first.value == .bearerClosed(reason))
        #expect(await second.value == .bearerClosed(reason))
        #expect(client.closedReason == reason)
    }

    @Test func anMTUExchangeBecomesL2CAPsReceiveMaximumForATT() async throws {
        let harness = try await Self.connectedHarness()
        let client = ATTClient(bearer: L2CAPBearer(manager: harness.manager, connection: Self.handle))
        let exchange = Task { try await client.exchangeMTU(clientRxMTU: 100) }
        let request = try await harness.log.nextACL()
        #expect(Hex.string(request.data, separator: " ") == "03 00 04 00 02 64 00")
        await harness.inject([ACLDataPacket(connectionHandle: 0x0040, packetBoundary: .firstFlushable,
                                            data: BasicFrame(channelID: .attributeProtocol, payload: [0x03, 0x40, 0x00]).encode())])
        #expect(try await exchange.value == 64)
        // A 65-byte PDU now exceeds what ATT accepts and is dropped by L2CAP unbuffered.
        let before = harness.manager.statistics.totalDrops
        let oversized = BasicFrame(channelID: .attributeProtocol, payload: [0x1B, 0x03, 0x00] + [UInt8](repeating: 7, count: 62)).encode()
        await harness.inject([ACLDataPacket(connectionHandle: 0x0040, packetBoundary: .firstFlushable, data: oversized)])
        #expect(harness.manager.statistics.totalDrops == before + 1)
        #expect(client.statistics.valuesDelivered == 0)
    }

    @Test func aDeadBearerAsksForTheLinkToBeDropped() async throws {
        let harness = try await Self.connectedHarness()
        let asked = AsyncStream.makeStream(of: HCIErrorCode.self)
        let bearer = L2CAPBearer(manager: harness.manager, connection: Self.handle) { reason in
            asked.continuation.yield(reason)
        }
        let client = ATTClient(bearer: bearer, transactionTimeout: .milliseconds(50))
        let error = await attError { () async throws(ATTError) in try await client.read(0x0003) }
        #expect(error == .transactionTimedOut(request: .readRequest, timeout: .milliseconds(50)))
        let reason = try await withDeadline("the disconnect hook") {
            var iterator = asked.stream.makeAsyncIterator()
            return await iterator.next()
        }
        #expect(reason == .remoteUserTerminatedConnection)
        #expect(throws: ATTBearerError.self) { try bearer.send([0x0A, 0x03, 0x00]) }
    }

    /// A peer floods indications while the controller holds every credit (it stopped
    /// reporting completed packets): the confirmations are answers the peer provoked, so
    /// beyond L2CAP's answer bound they are dropped and counted, and the bearer stays up.
    @Test func confirmationsOfAnIndicationFloodWhileCreditsAreWithheldAreBounded() async throws {
        let harness = try await L2CAPHarness.make(aclCount: 4)
        await harness.connect(Self.handle)
        let client = ATTClient(bearer: L2CAPBearer(manager: harness.manager, connection: Self.handle))
        let indication = ACLDataPacket(connectionHandle: Self.handle, packetBoundary: .firstFlushable,
                                       data: BasicFrame(channelID: .attributeProtocol, payload: [0x1D, 0x03, 0x00, 0x01]).encode())
        for _ in 0..<60 { await harness.inject(Array(repeating: indication, count: 5_000)) }
        // The controller's four buffers took the first four confirmations.
        for _ in 0..<4 { _ = try await harness.log.nextACL() }
        let queued = harness.manager.state.withLock { $0.connections[Self.handle]?.outgoing.count ?? 0 }
        #expect(queued == ChannelManager.Configuration().outgoingLimit.answers)
        #expect(harness.manager.statistics.answersDroppedForFullQueue == 300_000 - 4 - queued)
        #expect(client.closedReason == nil)
        #expect(client.statistics.indicationsConfirmed == 300_000)
    }

    /// The host's own PDUs meeting L2CAP's bound (the controller kept every earlier one
    /// without returning a credit) end the bearer with a reason that says so.
    @Test func writeCommandsPastL2CAPsHostBoundEndTheBearerWithTheReason() async throws {
        let limit = OutgoingLimit(hostPDUs: 8, hostBytes: 10_000, answers: 2)
        let harness = try await L2CAPHarness.make(aclCount: 1, configuration: .init(outgoingLimit: limit))
        await harness.connect(Self.handle)
        let client = ATTClient(bearer: L2CAPBearer(manager: harness.manager, connection: Self.handle))
        let write = ATTPDU.writeCommand(.init(attributeHandle: 0x0003, attributeValue: [1]))
        try client.sendCommand(write)
        _ = try await harness.log.nextACL() // in the controller's only buffer
        for _ in 0..<8 { try client.sendCommand(write) }
        #expect(client.closedReason == nil)
        let refused = await attError { () throws(ATTError) in try client.sendCommand(write) }
        let reason = ATTBearerError.failed("\(L2CAPError.outgoingQueueFull(queuedPDUs: 8, queuedBytes: 32))")
        #expect(refused == .bearerClosed(reason))
        #expect(client.closedReason == reason)
        #expect(harness.manager.statistics.sendsRefusedForFullQueue == 1)
    }
}
