import BluetoothCore
import HCI
@testable import L2CAP
import Testing
import TestSupport

@Suite struct ConnectionTests {
    @Test func connectionsFollowTheControllersEvents() async throws {
        let harness = try await L2CAPHarness.make()
        let events = Inbox<ConnectionEvent>()
        harness.manager.setConnectionHandler { events.append($0) }
        // The legacy event and the enhanced one both create connections.
        await harness.inject(.le(.connectionComplete(LEConnectionComplete(
            status: .success, connectionHandle: 0x0001, role: .peripheral, peerAddressType: .public,
            peerAddress: BluetoothAddress(0x0011_2233_4455), connectionInterval: 6, peripheralLatency: 0,
            supervisionTimeout: 100, centralClockAccuracy: 0))))
        await harness.connect(0x0002, role: .central)
        // A failed attempt creates nothing.
        await harness.inject(.le(.connectionComplete(LEConnectionComplete(
            status: .connectionFailedToBeEstablished, connectionHandle: 0x0003, role: .central, peerAddressType: .public,
            peerAddress: BluetoothAddress(0), connectionInterval: 0, peripheralLatency: 0, supervisionTimeout: 0, centralClockAccuracy: 0))))
        #expect(harness.manager.connections.map(\.handle) == [1, 2])
        #expect(harness.manager.connection(1)?.role == .peripheral)
        #expect(harness.manager.connection(2)?.peerAddress == L2CAPHarness.peer)

        await harness.inject(.le(.connectionUpdateComplete(LEConnectionUpdateComplete(
            status: .success, connectionHandle: 2, connectionInterval: 40, peripheralLatency: 2, supervisionTimeout: 500))))
        #expect(harness.manager.connection(2)?.connectionInterval == 40)

        await harness.disconnect(1, reason: .remoteUserTerminatedConnection)
        #expect(harness.manager.connections.map(\.handle) == [2])
        guard case let .disconnected(gone, reason)? = events.all.last else {
            Issue.record("no disconnection event")
            return
        }
        #expect(gone.handle == 1)
        #expect(reason == .remoteUserTerminatedConnection)
        #expect(events.all.count == 3)
    }

    @Test func dataReachesTheChannelsHandlerAndUnregisteredDataIsCounted() async throws {
        let harness = try await L2CAPHarness.make()
        let att = Inbox<ChannelEvent>()
        let smp = Inbox<ChannelEvent>()
        // Registering from the connection event: nothing can arrive before it.
        harness.manager.setConnectionHandler { [manager = harness.manager] event in
            guard case let .connected(connection) = event else { return }
            _ = try? manager.setHandler({ att.append($0) }, channel: .attributeProtocol, connection: connection.handle)
            _ = try? manager.setHandler({ smp.append($0) }, channel: .securityManagerProtocol, connection: connection.handle)
        }
        await harness.connect(0x40)
        await harness.receive([0x02, 0x17, 0x00], cid: .attributeProtocol, handle: 0x40)
        await harness.receive([0x01, 0x03, 0x00, 0x01, 0x10, 0x07, 0x07], cid: .securityManagerProtocol, handle: 0x40)
        await harness.receive([0xAA], cid: ChannelIdentifier(0x0040), handle: 0x40)
        await harness.receive([0xBB], cid: .attributeProtocol, handle: 0x41)
        try harness.manager.setHandler(nil, channel: .securityManagerProtocol, connection: 0x40)
        await harness.receive([0xCC], cid: .securityManagerProtocol, handle: 0x40)
        #expect(att.all == [.received([0x02, 0x17, 0x00])])
        #expect(smp.all == [.received([0x01, 0x03, 0x00, 0x01, 0x10, 0x07, 0x07])])
        let statistics = harness.manager.statistics
        #expect(statistics.unsupportedChannelPDUs == 1)
        #expect(statistics.unknownConnectionFragments == 1)
        #expect(statistics.unhandledChannelPDUs == 1)
    }

    /// Controllers give a link's handle to the next link at once. A registration names
    /// its connection: the first link's late close (a SecurityManager or ATT bearer let go
    /// after the handle was reused) took the SMP channel from the second link, and its
    /// queued PDUs (keys in distribution) went out on the second link. Found by a review.
    @Test func aRegistrationActsOnItsOwnConnectionNotTheNextOneOnItsHandle() async throws {
        let harness = try await L2CAPHarness.make()
        await harness.connect(0x40)
        let first = try harness.manager.setHandler({ _ in }, channel: .securityManagerProtocol, connection: 0x40)
        await harness.disconnect(0x40, reason: .remoteUserTerminatedConnection)
        await harness.connect(0x40)
        let smp = Inbox<ChannelEvent>()
        let second = try harness.manager.setHandler({ smp.append($0) }, channel: .securityManagerProtocol, connection: 0x40)
        #expect(first != second)
        harness.manager.removeHandler(first)
        await harness.receive([0x0B, 0x01], cid: .securityManagerProtocol, handle: 0x40)
        #expect(smp.all == [.received([0x0B, 0x01])])
        await #expect(throws: L2CAPError.unknownConnection(handle: 0x40)) {
            try await harness.manager.send([0x06] + [UInt8](repeating: 0x11, count: 16), on: first)
        }
        #expect(throws: L2CAPError.unknownConnection(handle: 0x40)) {
            try harness.manager.submit([0x06], on: first)
        }
        try await harness.manager.send([0x0B, 0x01], on: second)
        harness.manager.removeHandler(second)
        await harness.receive([0x0B, 0x01], cid: .securityManagerProtocol, handle: 0x40)
        #expect(smp.all.count == 1)
    }

    @Test func registrationIsCheckedAndMaximaAreConfigurable() async throws {
        let harness = try await L2CAPHarness.make()
        #expect(throws: L2CAPError.unknownConnection(handle: 0x40)) {
            try harness.manager.setHandler({ _ in }, channel: .attributeProtocol, connection: 0x40)
        }
        await harness.connect(0x40)
        #expect(throws: L2CAPError.unsupportedChannel(.leSignaling)) {
            try harness.manager.setHandler({ _ in }, channel: .leSignaling, connection: 0x40)
        }
        #expect(throws: L2CAPError.unsupportedChannel(ChannelIdentifier(0x0040))) {
            try harness.manager.setHandler({ _ in }, channel: ChannelIdentifier(0x0040), connection: 0x40)
        }
        let att = Inbox<ChannelEvent>()
        try harness.manager.setHandler({ att.append($0) }, channel: .attributeProtocol, connection: 0x40)
        try harness.manager.setMaximumReceivePayload(23, channel: .attributeProtocol, connection: 0x40)
        await harness.receive(Array(repeating: 1, count: 24), cid: .attributeProtocol, handle: 0x40)
        await harness.receive(Array(repeating: 2, count: 23), cid: .attributeProtocol, handle: 0x40)
        // The channel hears of the drop, with the first octets, so ATT can fail the request
        // it answered at once.
        #expect(att.all == [.oversized(length: 24, prefix: [1, 1]), .received(Array(repeating: 2, count: 23))])
        #expect(harness.manager.statistics.oversizedPDUs == 1)
    }

    /// Every malformed fragment shape through the whole stack: dropped, counted, and the
    /// next good PDU delivered.
    @Test(arguments: MalformedShape.allCases)
    func malformedFragmentsFromTheControllerAreDroppedAndCounted(shape: MalformedShape) async throws {
        let harness = try await L2CAPHarness.make()
        await harness.connect(0x40)
        let att = Inbox<ChannelEvent>()
        try harness.manager.setHandler({ att.append($0) }, channel: .attributeProtocol, connection: 0x40)
        await harness.inject(shape.packets)
        await harness.receive([0x0A, 0x01, 0x00], cid: .attributeProtocol, handle: 0x40)
        let told = att.all.filter { if case .oversized = $0 { true } else { false } }
        #expect(att.all.filter { !told.contains($0) } == [.received([0x0A, 0x01, 0x00])])
        #expect(told.count == (shape == .startAnnouncesMoreThanATTMaximum ? 1 : 0), "\(told)")
        let drops = shape.expected.count + shape.droppedByNextStart.count
        #expect(harness.manager.statistics.totalDrops == drops)
    }

    @Test func aDisconnectFailsPendingSendsAtOnceWithTheReason() async throws {
        let harness = try await L2CAPHarness.make(aclLength: 27, aclCount: 2)
        await harness.connect(0x40, role: .peripheral)
        await harness.connect(0x41)
        let att = Inbox<ChannelEvent>()
        let smp = Inbox<ChannelEvent>()
        try harness.manager.setHandler({ att.append($0) }, channel: .attributeProtocol, connection: 0x40)
        try harness.manager.setHandler({ smp.append($0) }, channel: .securityManagerProtocol, connection: 0x40)
        // A signaling request on the air, awaiting its answer (first credit).
        let request = Task {
            try await harness.manager.requestConnectionParameterUpdate(SignalingTests.goodRequest, connection: 0x40)
        }
        _ = try await harness.log.nextACL()
        // A long SDU mid-send (second credit, then stuck), and another queued behind it.
        let long = Task { try await harness.manager.send(Array(repeating: 0, count: 200), cid: .attributeProtocol, connection: 0x40) }
        _ = try await harness.log.nextACL()
        let queued = Inbox<L2CAPError?>()
        harness.manager.enqueue(BasicFrame(channelID: .securityManagerProtocol, payload: [1]), handle: 0x40) { result in
            if case let .failure(error) = result { queued.append(error) } else { queued.append(nil) }
        }
        // No credit ever comes back for 0x40: only the disconnection can end these waits.
        await harness.disconnect(0x40, reason: .connectionTimeout)
        await #expect(throws: L2CAPError.disconnected(reason: .connectionTimeout)) { try await long.value }
        await #expect(throws: L2CAPError.disconnected(reason: .connectionTimeout)) { try await request.value }
        #expect(queued.all == [.disconnected(reason: .connectionTimeout)])
        #expect(att.all == [.disconnected(reason: .connectionTimeout)])
        #expect(smp.all == [.disconnected(reason: .connectionTimeout)])
        await #expect(throws: L2CAPError.unknownConnection(handle: 0x40)) {
            try await harness.manager.send([1], cid: .attributeProtocol, connection: 0x40)
        }
        // The other link still works.
        let other = Task { try await harness.manager.send([7], cid: .attributeProtocol, connection: 0x41) }
        while true {
            let packet = try await harness.log.nextACL()
            await harness.complete(packet.connectionHandle)
            if packet.connectionHandle == 0x41 { break }
        }
        try await other.value
    }

    @Test func aHardwareErrorEndsEveryConnection() async throws {
        let harness = try await L2CAPHarness.make()
        await harness.connect(0x40)
        let att = Inbox<ChannelEvent>()
        try harness.manager.setHandler({ att.append($0) }, channel: .attributeProtocol, connection: 0x40)
        await harness.inject(.hardwareError(HCIEvent.HardwareError(hardwareCode: 1)))
        #expect(harness.manager.connections.isEmpty)
        #expect(att.all == [.disconnected(reason: .hardwareFailure)])
    }

    /// Random ACL packets and random signaling commands through the whole manager: no trap,
    /// and whatever it answers is well-formed.
    @Test func randomTrafficThroughTheManagerNeverTraps() async throws {
        let harness = try await L2CAPHarness.make(aclLength: 251, aclCount: 8)
        await harness.connect(0x40)
        try harness.manager.setHandler({ _ in }, channel: .attributeProtocol, connection: 0x40)
        var random = SeededRandom(seed: 42)
        var packets: [ACLDataPacket] = []
        for _ in 0..<20_000 {
            var data = random.bytes(lengths: 0...40)
            if Bool.random(using: &random), data.count >= 4 {
                // A whole signaling frame with random content.
                data = BasicFrame(channelID: .leSignaling, payload: Array(data.prefix(Int.random(in: 0...30, using: &random)))).encode()
            }
            let boundary = ACLDataPacket.PacketBoundary.allCases.randomElement(using: &random) ?? .continuing
            packets.append(ACLDataPacket(connectionHandle: Bool.random(using: &random) ? 0x40 : 0x41, packetBoundary: boundary, data: data))
        }
        await harness.inject(packets)
        // Every reject it queued leaves once the controller takes them (the rest of the
        // flood's answers met the answer bound and were counted, not queued).
        for _ in 0..<harness.manager.statistics.commandRejectsSent {
            let packet = try await harness.log.nextACL()
            await harness.complete(packet.connectionHandle)
            #expect(try SignalingCommand(decoding: try BasicFrame(decoding: packet.data).payload).code == .commandReject)
        }
        // Still serving: a request is answered.
        await harness.receiveSignaling(SignalingCommand(code: SignalingCode(rawValue: 0x7F), identifier: 0x99, data: []), handle: 0x40)
        #expect(try await harness.nextSignaling(handle: 0x40) == SignalingCommand(identifier: 0x99, CommandReject.commandNotUnderstood))
    }
}

@Suite struct SignalingFuzzTests {
    /// 100,000 random C-frame payloads: decoding is total, and whatever decodes re-encodes
    /// to the same bytes.
    @Test func randomCommandsDecodeOrFailWithTypedErrors() async {
        await cpuBound {
            var random = SeededRandom(seed: 0x5160)
            var decoded = 0
            let codes: [UInt8] = [0x01, 0x06, 0x12, 0x13, 0x14, 0xFF]
            for iteration in 0..<100_000 {
                await yieldPeriodically(iteration: iteration)
                var bytes = random.bytes(lengths: 0...16)
                if bytes.count >= 4, Bool.random(using: &random) {
                    bytes[0] = codes.randomElement(using: &random) ?? 0x12
                    bytes[2] = UInt8(bytes.count - 4)
                    bytes[3] = 0
                }
                guard let command = try? SignalingCommand(decoding: bytes) else { continue }
                decoded += 1
                #expect(command.encode() == bytes)
                if let reject = try? command.decode(CommandReject.self) { #expect(reject.encode() == command.data) }
                if let request = try? command.decode(ConnectionParameterUpdateRequest.self) { #expect(request.encode() == command.data) }
                if let response = try? command.decode(ConnectionParameterUpdateResponse.self) { #expect(response.encode() == command.data) }
                if let disconnection = try? command.decode(DisconnectionRequest.self) { #expect(disconnection.encode() == command.data) }
            }
            #expect(decoded > 10_000)
        }
    }
}
