import BluetoothCore
import HCI
@testable import L2CAP
import Testing
import TestSupport

@Suite struct FragmentationTests {
    /// Frame sizes on both sides of one and two ACL lengths, for 27 and 251 byte buffers.
    @Test(arguments: [
        (27, 22, 1), (27, 23, 1), (27, 24, 2), (27, 50, 2), (27, 51, 3), (27, 0, 1),
        (251, 246, 1), (251, 247, 1), (251, 248, 2), (251, 498, 2), (251, 499, 3), (251, 517, 3),
    ])
    func fragmentsFitTheACLLengthAndCarryTheLEFlags(aclLength: Int, payloadLength: Int, expectedCount: Int) throws {
        let payload = (0..<payloadLength).map { UInt8(truncatingIfNeeded: $0) }
        let frame = BasicFrame(channelID: .attributeProtocol, payload: payload)
        let fragments = ACLFragmentation.fragments(of: frame, connectionHandle: 0x0ABC, maximumLength: aclLength)
        #expect(fragments.count == expectedCount)
        #expect(fragments.first?.packetBoundary == .firstNonFlushable)
        #expect(fragments.dropFirst().allSatisfy { $0.packetBoundary == .continuing })
        #expect(fragments.allSatisfy { $0.connectionHandle == 0x0ABC && $0.broadcast == .pointToPoint })
        #expect(fragments.dropLast().allSatisfy { $0.data.count == aclLength })
        #expect((fragments.last?.data.count ?? 0) == (payloadLength + 4) - (expectedCount - 1) * aclLength)
        #expect(fragments.flatMap(\.data) == frame.encode())
    }

    @Test func exactBytesOfATwoFragmentPDU() {
        let frame = BasicFrame(channelID: .attributeProtocol, payload: Array(1...24))
        let fragments = ACLFragmentation.fragments(of: frame, connectionHandle: 0x0040, maximumLength: 27)
        #expect(fragments.map { $0.encode() } == [
            [0x40, 0x00, 27, 0x00, 24, 0x00, 0x04, 0x00] + Array(1...23),
            [0x40, 0x10, 1, 0x00, 24],
        ])
    }

    /// 104 bytes over 27-byte buffers, two of them: the host never has more than two
    /// packets in the controller, and every Number Of Completed Packets lets one more out.
    @Test func creditsAreRespected() async throws {
        let harness = try await L2CAPHarness.make(aclLength: 27, aclCount: 2)
        await harness.connect(0x40)
        let payload = (0..<100).map { UInt8($0) }
        let send = Task { try await harness.manager.send(payload, cid: .attributeProtocol, connection: 0x40) }
        var received: [ACLDataPacket] = []
        received.append(try await harness.log.nextACL())
        received.append(try await harness.log.nextACL())
        #expect(harness.controller.availableACLCredits == 0)
        for _ in 0..<2 {
            await harness.complete(0x40)
            received.append(try await harness.log.nextACL())
        }
        try await send.value
        #expect(received.map(\.data.count) == [27, 27, 27, 23])
        #expect(received.map(\.packetBoundary) == [.firstNonFlushable, .continuing, .continuing, .continuing])
        #expect(received.flatMap(\.data) == BasicFrame(channelID: .attributeProtocol, payload: payload).encode())
        #expect(harness.chip.maximumInFlight == 2)
    }

    /// One credit, a long PDU on one link, a short one on another queued after the long
    /// one started: the short one goes out second or third (depending on whether it was
    /// queued before the long PDU's second fragment reached the driver), not ninth.
    @Test func aLongPDUCannotStarveAnotherConnection() async throws {
        let harness = try await L2CAPHarness.make(aclLength: 27, aclCount: 1)
        await harness.connect(0x40)
        await harness.connect(0x41)
        let done = Inbox<UInt16>()
        let long = BasicFrame(channelID: .attributeProtocol, payload: Array(repeating: 0xAA, count: 200))
        harness.manager.enqueue(long, handle: 0x40) { _ in done.append(0x40) }
        var order: [UInt16] = [try await harness.log.nextACL().connectionHandle]
        harness.manager.enqueue(BasicFrame(channelID: .attributeProtocol, payload: [1]), handle: 0x41) { _ in done.append(0x41) }
        while order.count < 9 {
            await harness.complete(order.last ?? 0)
            order.append(try await harness.log.nextACL().connectionHandle)
        }
        await harness.complete(order.last ?? 0)
        #expect(order.filter { $0 == 0x41 }.count == 1)
        #expect((order.firstIndex(of: 0x41) ?? 99) <= 2)
        #expect(harness.chip.maximumInFlight == 1)
        #expect(done.all.first == 0x41)
    }

    /// Two long PDUs queued together alternate fragment by fragment.
    @Test func twoBusyConnectionsAlternate() async throws {
        let harness = try await L2CAPHarness.make(aclLength: 27, aclCount: 1)
        await harness.connect(0x40)
        await harness.connect(0x41)
        let frame = BasicFrame(channelID: .attributeProtocol, payload: Array(repeating: 0x55, count: 77)) // 3 fragments
        let results = Inbox<Bool>()
        harness.manager.enqueue(frame, handle: 0x40) { results.append((try? $0.get()) != nil) }
        harness.manager.enqueue(frame, handle: 0x41) { results.append((try? $0.get()) != nil) }
        var packets: [ACLDataPacket] = []
        for _ in 0..<6 {
            let packet = try await harness.log.nextACL()
            packets.append(packet)
            await harness.complete(packet.connectionHandle)
        }
        #expect(packets.map(\.connectionHandle) == [0x40, 0x41, 0x40, 0x41, 0x40, 0x41])
        // Per connection the fragments still read as one PDU.
        for handle: UInt16 in [0x40, 0x41] {
            let mine = packets.filter { $0.connectionHandle == handle }
            #expect(mine.map(\.packetBoundary) == [.firstNonFlushable, .continuing, .continuing])
            #expect(mine.flatMap(\.data) == frame.encode())
        }
        #expect(harness.chip.maximumInFlight == 1)
        #expect(results.all == [true, true])
    }

    @Test func sendsThatCannotStartFailWithTypedErrors() async throws {
        let harness = try await L2CAPHarness.make()
        await #expect(throws: L2CAPError.unknownConnection(handle: 0x99)) {
            try await harness.manager.send([1], cid: .attributeProtocol, connection: 0x99)
        }
        await harness.connect(0x40)
        await #expect(throws: L2CAPError.payloadTooLarge(size: 65536, maximum: 65535)) {
            try await harness.manager.send(Array(repeating: 0, count: 65536), cid: .attributeProtocol, connection: 0x40)
        }
    }
}

/// ``ChannelManager/waitUntilSent(connection:)``: what lets a Write Command go out before
/// the Disconnect that follows it.
@Suite struct WaitUntilSentTests {
    @Test func returnsOnlyOnceEverythingQueuedIsInTheController() async throws {
        let harness = try await L2CAPHarness.make(aclLength: 27, aclCount: 1)
        await harness.connect(0x40)
        // Two fragments, one credit: the second waits for a completion.
        try harness.manager.submit(Array(repeating: 0xAB, count: 40), cid: .attributeProtocol, connection: 0x40)
        let flushed = Lock(false)
        let waiter = Task {
            await harness.manager.waitUntilSent(connection: 0x40)
            flushed.withLock { $0 = true }
        }
        _ = try await harness.log.nextACL()
        #expect(!flushed.withLock { $0 })
        await harness.complete(0x40)
        _ = try await harness.log.nextACL()
        await waiter.value
        #expect(flushed.withLock { $0 })
    }

    @Test func returnsAtOnceWhenNothingIsQueuedOrTheLinkEnds() async throws {
        let harness = try await L2CAPHarness.make(aclLength: 27, aclCount: 1)
        await harness.connect(0x40)
        await harness.manager.waitUntilSent(connection: 0x40)
        await harness.manager.waitUntilSent(connection: 0x99)
        try harness.manager.submit(Array(repeating: 1, count: 40), cid: .attributeProtocol, connection: 0x40)
        _ = try await harness.log.nextACL()
        // A controller that takes nothing more: a bounded wait gives up (HostLink's
        // disconnect waits this way, so a peer withholding credits cannot keep the link).
        #expect(await harness.manager.waitUntilSent(connection: 0x40, timeout: .milliseconds(100)) == false)
        let waiter = Task { await harness.manager.waitUntilSent(connection: 0x40) }
        await harness.disconnect(0x40, reason: .remoteUserTerminatedConnection)
        #expect(await waiter.value)
    }
}
