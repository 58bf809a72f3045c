import BluetoothCore
@testable import HCI
import HCITransport
import Testing
import TestSupport

/// A scripted controller: answers the bring-up commands like a small LE-only chip.
struct FakeChip: Sendable {
    var address = BluetoothAddress(0xF00D_0000_0042)
    var leFeatures: LEFeatures = [.leEncryption, .leDataPacketLengthExtension, .le2MPHY, .leExtendedAdvertising]
    var hciVersion: UInt8 = 0x0C
    var leBuffers: (length: UInt16, count: UInt8) = (251, 2)
    var supported: [any HCICommand.Type] = [
        LEReadBufferSizeV1.self, LEReadMaximumDataLength.self, LEReadRemoteFeatures.self,
        LEReadNumberOfSupportedAdvertisingSets.self,
    ]
    var credits: UInt8 = 1

    func commandsBitmask() -> [UInt8] {
        var octets = [UInt8](repeating: 0, count: 64)
        for command in supported {
            if let bit = command.supportedCommandBit { octets[bit.octet] |= 1 << bit.bit }
        }
        return octets
    }

    func complete(_ opcode: HCIOpcode, _ parameters: [UInt8], credits: UInt8? = nil) -> HCIPacket {
        let event = HCIEvent.commandComplete(HCIEvent.CommandComplete(
            numHCICommandPackets: credits ?? self.credits, opcode: opcode, returnParameters: [0] + parameters))
        return HCIPacket(.event, event.encode())
    }

    func answer(_ packet: HCIPacket) -> [HCIPacket] {
        guard packet.type == .command, packet.bytes.count >= 3 else { return [] }
        let opcode = HCIOpcode(rawValue: UInt16(packet.bytes[0]) | UInt16(packet.bytes[1]) << 8)
        var writer = ByteWriter()
        switch opcode {
        case ReadLocalVersionInformation.opcode:
            ReadLocalVersionInformation.ReturnParameters(hciVersion: hciVersion, hciSubversion: 1, lmpVersion: hciVersion, manufacturer: 0x0002, lmpSubversion: 7).encode(into: &writer)
        case ReadLocalSupportedCommands.opcode:
            writer.write(contentsOf: commandsBitmask())
        case ReadLocalSupportedFeatures.opcode:
            writer.write(LMPFeatures([.leSupportedController, .brEdrNotSupported]).rawValue)
        case LEReadLocalSupportedFeatures.opcode:
            writer.write(leFeatures.rawValue)
        case ReadBDADDR.opcode:
            writer.write(address)
        case LEReadBufferSizeV1.opcode:
            writer.write(leBuffers.length)
            writer.write(leBuffers.count)
        case LEReadMaximumDataLength.opcode:
            for value: UInt16 in [251, 2120, 251, 2120] { writer.write(value) }
        case LEReadNumberOfSupportedAdvertisingSets.opcode:
            writer.write(UInt8(4))
        case Reset.opcode, SetEventMask.opcode, LESetEventMask.opcode:
            break
        default:
            return [complete(opcode, [], credits: credits).withStatus(.unknownCommand)]
        }
        return [complete(opcode, writer.bytes)]
    }
}

extension HCIPacket {
    /// The same Command Complete with another status byte.
    func withStatus(_ status: HCIErrorCode) -> HCIPacket {
        var copy = self
        copy.bytes[5] = status.rawValue
        return copy
    }
}

func opcodes(_ packets: [HCIPacket]) -> [HCIOpcode] {
    packets.filter { $0.type == .command }.map { HCIOpcode(rawValue: UInt16($0.bytes[0]) | UInt16($0.bytes[1]) << 8) }
}

@Suite struct ControllerDriverTests {
    func makeController(_ chip: FakeChip = FakeChip()) throws -> (HCIController, ScriptedTransport) {
        let transport = ScriptedTransport { chip.answer($0) }
        let controller = HCIController(transport: transport)
        try controller.start()
        return (controller, transport)
    }

    @Test func bringUpRunsTheSequenceAndLearnsTheController() async throws {
        let (controller, transport) = try makeController()
        let info = try await controller.powerOn()
        #expect(info.address == BluetoothAddress(0xF00D_0000_0042))
        #expect(info.aclBuffer == .init(packetLength: 251, packetCount: 2, source: LEReadBufferSizeV1.name))
        #expect(info.maximumDataLength?.supportedMaxTxOctets == 251)
        #expect(info.numberOfAdvertisingSets == 4)
        #expect(opcodes(transport.sent) == [
            Reset.opcode, ReadLocalVersionInformation.opcode, ReadLocalSupportedCommands.opcode,
            ReadLocalSupportedFeatures.opcode, LEReadLocalSupportedFeatures.opcode, ReadBDADDR.opcode,
            LEReadBufferSizeV1.opcode, SetEventMask.opcode, LESetEventMask.opcode,
            LEReadMaximumDataLength.opcode, LEReadNumberOfSupportedAdvertisingSets.opcode,
        ])
        #expect(controller.availableACLCredits == 2)
        #expect(controller.currentStatus == .ready(info))
    }

    @Test func leEventMaskHasOnlyWhatTheControllerCanProduce() async throws {
        let (controller, _) = try makeController()
        let mask = try await controller.powerOn().leEventMask
        #expect(mask.contains(.dataLengthChange))
        #expect(mask.contains(.phyUpdateComplete))
        #expect(mask.contains(.extendedAdvertisingReport))
        #expect(mask.contains(.longTermKeyRequest))
        #expect(mask.contains(.readRemoteFeaturesComplete))
        #expect(!mask.contains(.channelSelectionAlgorithm))
        #expect(!mask.contains(.directedAdvertisingReport))
        #expect(!mask.contains(.enhancedConnectionCompleteV2))

        var legacy = FakeChip()
        legacy.leFeatures = [.leEncryption]
        legacy.supported = []
        let (old, _) = try makeController(legacy)
        let oldMask = try await old.powerOn().leEventMask
        #expect(oldMask == [.connectionComplete, .advertisingReport, .connectionUpdateComplete, .longTermKeyRequest])
    }

    @Test func sharedBuffersWhenTheControllerHasNoLEBuffers() async throws {
        var shared = FakeChip()
        shared.leBuffers = (0, 0)
        let chip = shared
        let transport = ScriptedTransport { packet in
            if opcodes([packet]) == [ReadBufferSize.opcode] {
                var writer = ByteWriter()
                ReadBufferSize.ReturnParameters(aclDataPacketLength: 1021, synchronousDataPacketLength: 64, totalACLDataPackets: 8, totalSynchronousDataPackets: 0).encode(into: &writer)
                return [chip.complete(ReadBufferSize.opcode, writer.bytes)]
            }
            return chip.answer(packet)
        }
        let controller = HCIController(transport: transport)
        try controller.start()
        let info = try await controller.powerOn()
        #expect(info.aclBuffer.packetLength == 1021)
        #expect(info.aclBuffer.packetCount == 8)
    }

    @Test func commandsWaitForCredits() async throws {
        // The chip answers nothing by itself: the test decides when each answer arrives.
        let transport = ScriptedTransport()
        let controller = HCIController(transport: transport)
        try controller.start()
        let chip = FakeChip()
        async let first: Void = { try await controller.send(Reset(), timeout: .seconds(60)) }()
        async let second = controller.send(ReadBDADDR(), timeout: .seconds(60))
        try await waitUntil { transport.sent.count == 1 }
        // One credit: the second command must not be on the wire yet.
        #expect(opcodes(transport.sent) == [Reset.opcode])
        transport.inject([chip.complete(Reset.opcode, [])])
        try await waitUntil { transport.sent.count == 2 }
        transport.inject(chip.answer(transport.sent[1]))
        try await first
        #expect(try await second.address == chip.address)
    }

    @Test func completionsMatchTheirOwnOpcode() async throws {
        let transport = ScriptedTransport()
        let controller = HCIController(transport: transport)
        try controller.start()
        var chip = FakeChip()
        chip.credits = 2
        let bootChip = chip
        async let address = controller.send(ReadBDADDR(), timeout: .seconds(60))
        async let version = controller.send(ReadLocalVersionInformation(), timeout: .seconds(60))
        // The controller may leave its first credit unused before the first answer: answer
        // once both are out, in the reverse order.
        transport.inject([bootChip.complete(HCIOpcode(rawValue: 0), [], credits: 2).withoutStatus()])
        try await waitUntil { transport.sent.count == 2 }
        let sent = transport.sent
        transport.inject(bootChip.answer(sent[1]) + bootChip.answer(sent[0]))
        #expect(try await address.address == chip.address)
        #expect(try await version.hciVersion == chip.hciVersion)
    }

    @Test func aTimeoutNamesTheCommandAndFreesTheSlot() async throws {
        let transport = ScriptedTransport()
        let controller = HCIController(transport: transport)
        try controller.start()
        await #expect(throws: HCIError.commandTimedOut(ReadBDADDR.opcode, milliseconds: 50)) {
            try await controller.send(ReadBDADDR(), timeout: .milliseconds(50))
        }
        #expect(HCIError.commandTimedOut(ReadBDADDR.opcode, milliseconds: 50).description.contains("Read BD_ADDR"))
        #expect(controller.statistics.commandTimeouts == 1)
        // The next command goes out although no credit ever came back.
        transport.setResponder { FakeChip().answer($0) }
        try await controller.send(Reset())
    }

    @Test func errorStatusAndGarbageAnswersAreTypedErrors() async throws {
        let chip = FakeChip()
        let transport = ScriptedTransport { packet in
            switch opcodes([packet]).first {
            case ReadBDADDR.opcode?: return [chip.complete(ReadBDADDR.opcode, [1, 2, 3])]
            case Reset.opcode?: return [chip.complete(Reset.opcode, []).withStatus(.commandDisallowed)]
            default: return chip.answer(packet)
            }
        }
        let controller = HCIController(transport: transport)
        try controller.start()
        await #expect(throws: HCIError.commandFailed(Reset.opcode, .commandDisallowed)) {
            try await controller.send(Reset())
        }
        await #expect(throws: HCIError.malformedReturnParameters(ReadBDADDR.opcode, .truncated(needed: 6, available: 3))) {
            try await controller.send(ReadBDADDR())
        }
        await #expect(throws: HCIError.commandFailed(LEReadAdvertisingPhysicalChannelTxPower.opcode, .unknownCommand)) {
            try await controller.send(LEReadAdvertisingPhysicalChannelTxPower())
        }
    }

    @Test func commandStatusEndsCommandsThatCompleteLater() async throws {
        let transport = ScriptedTransport { packet in
            let status = HCIEvent.commandStatus(HCIEvent.CommandStatus(status: .success, numHCICommandPackets: 1, opcode: LECreateConnectionCancel.opcode == opcodes([packet]).first ? LECreateConnectionCancel.opcode : Disconnect.opcode))
            return [HCIPacket(.event, status.encode())]
        }
        let controller = HCIController(transport: transport)
        try controller.start()
        try await controller.send(Disconnect(connectionHandle: 0x40, reason: .remoteUserTerminatedConnection))
    }

    @Test func eventsReachSubscribersInOrderAndMalformedOnesAreCounted() async throws {
        let (controller, transport) = try makeController()
        let seen = Lock<[UInt8]>([])
        let subscription = controller.subscribe { event in
            if case let .hardwareError(error) = event { seen.withLock { $0.append(error.hardwareCode) } }
            if case let .dataBufferOverflow(overflow) = event { seen.withLock { $0.append(overflow.linkType) } }
        }
        transport.inject([
            HCIPacket(.event, [0x1A, 0x01, 0x01]),
            HCIPacket(.event, [0x1A, 0x05, 0x01]), // length says 5, one byte present
            HCIPacket(.event, [0xFE, 0x02, 0xAA, 0xBB]), // unknown event: kept, not an error
            HCIPacket(.event, [0x1A, 0x01, 0x02]),
        ])
        await transport.drain()
        #expect(seen.withLock { $0 } == [1, 2])
        #expect(controller.statistics.malformedEvents == 1)
        subscription.cancel()
    }

    /// Layers subscribe in the order they are built (L2CAP before the Connector), and a
    /// later one must not see a connection before an earlier one does.
    @Test func subscribersAreCalledInTheOrderTheySubscribed() async throws {
        let (controller, transport) = try makeController()
        let order = Lock<[Int]>([])
        let subscriptions = (0..<12).map { index in
            controller.subscribe { _ in order.withLock { $0.append(index) } }
        }
        transport.inject([HCIPacket(.event, [0x1A, 0x01, 0x01])])
        await transport.drain()
        #expect(order.withLock { $0 } == Array(0..<12))
        for subscription in subscriptions { subscription.cancel() }
    }

    @Test func aclCreditsFollowCompletedPacketsAndDisconnections() async throws {
        let (controller, transport) = try makeController()
        try await controller.powerOn()
        let packet = ACLDataPacket(connectionHandle: 0x40, packetBoundary: .firstNonFlushable, broadcast: .pointToPoint, data: [1, 2, 3])
        try await controller.sendACL(packet)
        try await controller.sendACL(packet)
        #expect(controller.availableACLCredits == 0)
        let third = Task { try await controller.sendACL(packet) }
        await transport.drain()
        #expect(transport.sent.filter { $0.type == .acl }.count == 2)
        transport.inject([HCIPacket(.event, HCIEvent.numberOfCompletedPackets(HCIEvent.NumberOfCompletedPackets(completions: [.init(connectionHandle: 0x40, completedPackets: 1)])).encode())])
        try await third.value
        #expect(transport.sent.filter { $0.type == .acl }.count == 3)
        // A controller that over-reports cannot raise credits above the total.
        transport.inject([HCIPacket(.event, HCIEvent.numberOfCompletedPackets(HCIEvent.NumberOfCompletedPackets(completions: [.init(connectionHandle: 0x40, completedPackets: 9)])).encode())])
        await transport.drain()
        #expect(controller.availableACLCredits == 2)
        try await controller.sendACL(packet)
        transport.inject([HCIPacket(.event, HCIEvent.disconnectionComplete(HCIEvent.DisconnectionComplete(status: .success, connectionHandle: 0x40, reason: .remoteUserTerminatedConnection)).encode())])
        await transport.drain()
        #expect(controller.availableACLCredits == 2)
    }

    @Test func aDroppedLinkFailsItsWaitingSendersAndRefusesNewOnes() async throws {
        let (controller, transport) = try makeController()
        try await controller.powerOn()
        let onLink = ACLDataPacket(connectionHandle: 0x40, packetBoundary: .firstNonFlushable, broadcast: .pointToPoint, data: [1])
        let onOther = ACLDataPacket(connectionHandle: 0x41, packetBoundary: .firstNonFlushable, broadcast: .pointToPoint, data: [2])
        try await controller.sendACL(onLink)
        try await controller.sendACL(onLink)
        let waiting = Task { try await controller.sendACL(onLink) }
        try await waitUntil { controller.state.withLock { $0.aclWaiters.count } == 1 }
        let other = Task { try await controller.sendACL(onOther) }
        try await waitUntil { controller.state.withLock { $0.aclWaiters.count } == 2 }
        let disconnection = HCIEvent.disconnectionComplete(HCIEvent.DisconnectionComplete(status: .success, connectionHandle: 0x40, reason: .connectionTimeout))
        transport.inject([HCIPacket(.event, disconnection.encode())])
        await #expect(throws: HCIError.disconnected(connectionHandle: 0x40, reason: .connectionTimeout)) { try await waiting.value }
        // The credits the dead link held go to the other link's sender.
        try await other.value
        #expect(transport.sent.filter { $0.type == .acl }.count == 3)
        await #expect(throws: HCIError.disconnected(connectionHandle: 0x40, reason: .unknownConnectionIdentifier)) {
            try await controller.sendACL(onLink)
        }
        // A new connection that reuses the handle may send again.
        let complete = LEConnectionComplete(
            status: .success, connectionHandle: 0x40, role: .central, peerAddressType: .random,
            peerAddress: BluetoothAddress(0xC44B_4D00_0001), connectionInterval: 24, peripheralLatency: 0,
            supervisionTimeout: 72, centralClockAccuracy: 0)
        transport.inject([HCIPacket(.event, HCIEvent.le(.connectionComplete(complete)).encode())])
        await transport.drain()
        try await controller.sendACL(onLink)
    }

    /// A controller that reports a new link on a handle whose Disconnection Complete never
    /// came: the old link's packets held the controller's credits for good and its waiting
    /// sender would have sent on the new link. Both now go as at a disconnection. Found by
    /// a review.
    @Test func aNewLinkOnALiveHandleEndsTheOldOnesCreditsAndSenders() async throws {
        let (controller, transport) = try makeController()
        try await controller.powerOn()
        let old = ACLDataPacket(connectionHandle: 0x40, packetBoundary: .firstNonFlushable, broadcast: .pointToPoint, data: [1])
        try await controller.sendACL(old)
        try await controller.sendACL(old)
        let waiting = Task { try await controller.sendACL(old) }
        try await waitUntil { controller.state.withLock { $0.aclWaiters.count } == 1 }
        transport.inject([HCIPacket(.event, L2CAPHarness.connectionComplete(0x40).encode())])
        // Before, it waited for as long as the new link gave no credit back.
        let failure = try await withDeadline("the old link's waiting sender", seconds: 10) { () async -> HCIError? in
            do {
                try await waiting.value
                return nil
            } catch {
                return error as? HCIError
            }
        }
        #expect(failure == .disconnected(connectionHandle: 0x40, reason: .unspecifiedError))
        #expect(controller.availableACLCredits == 2)
        #expect(transport.sent.filter { $0.type == .acl }.count == 2)
    }

    @Test func hardwareErrorFailsPendingCommandsAndBringsTheControllerUpAgain() async throws {
        let (controller, transport) = try makeController()
        try await controller.powerOn()
        var updates = controller.statusUpdates().makeAsyncIterator()
        _ = await updates.next() // the current status: ready
        let before = transport.sent.count
        transport.inject([HCIPacket(.event, [0x10, 0x01, 0x42])])
        #expect(await updates.next() == .recovering(hardwareCode: 0x42))
        #expect(await updates.next() == .bringingUp)
        guard case .ready? = await updates.next() else {
            Issue.record("controller did not come back")
            return
        }
        #expect(opcodes(Array(transport.sent[before...])).first == Reset.opcode)
        #expect(controller.statistics.hardwareErrors == 1)
    }

    /// An event stream nobody reads keeps the newest events; the rest are counted.
    @Test func anEventStreamNobodyReadsCountsWhatItDrops() async throws {
        let (controller, transport) = try makeController()
        let events = controller.events(bufferingNewest: 4)
        // Number Of Completed Packets for an unknown handle: changes nothing else.
        let event = HCIEvent.numberOfCompletedPackets(.init(completions: [.init(connectionHandle: 0x0EEE, completedPackets: 0)]))
        transport.inject(Array(repeating: HCIPacket(.event, event.encode()), count: 10))
        await transport.drain()
        #expect(controller.statistics.eventStreamDrops == 6)
        withExtendedLifetime(events) {}
    }

    /// A controller that reports Hardware Error over and over while nobody reads the status
    /// stream: the stream keeps only the newest statuses and counts the rest.
    @Test func aStatusStreamNobodyReadsStaysBoundedUnderAHardwareErrorStorm() async throws {
        let (controller, transport) = try makeController()
        try await controller.powerOn()
        let updates = controller.statusUpdates()
        let storm = 300
        transport.inject(Array(repeating: HCIPacket(.event, [0x10, 0x01, 0x42]), count: storm))
        await transport.drain()
        // The stream started with ready, then got a recovering per error (and whatever the
        // bring-ups published meanwhile): all but the newest few were dropped and counted.
        #expect(controller.statistics.statusUpdatesDropped >= storm + 1 - HCIController.statusBufferLimit)
        withExtendedLifetime(updates) {}
    }

    @Test func aClosedTransportFailsEverythingPending() async throws {
        let transport = ScriptedTransport()
        let controller = HCIController(transport: transport)
        try controller.start()
        let pending = Task { try await controller.send(Reset(), timeout: .seconds(60)) }
        try await waitUntil { transport.sent.count == 1 }
        controller.close()
        await #expect(throws: HCIError.transportClosed(nil)) { try await pending.value }
        await #expect(throws: HCIError.transportClosed(nil)) { try await controller.send(Reset()) }
    }

    @Test func randomBytesFromTheControllerNeverTrapTheDriver() async throws {
        let (controller, transport) = try makeController()
        try await controller.powerOn()
        var random = SeededRandom(seed: 7)
        var packets: [HCIPacket] = []
        for _ in 0..<100_000 {
            let type: HCIPacketType = Bool.random(using: &random) ? .event : .acl
            var bytes = random.bytes(lengths: 0...40)
            // Mostly well-framed, so decoding reaches past the header.
            if type == .event, bytes.count >= 2, Bool.random(using: &random) { bytes[1] = UInt8(bytes.count - 2) }
            // A hardware error would start a recovery: keep this loop about decoding.
            if type == .event, bytes.first == 0x10 { bytes[0] = 0xFF }
            packets.append(HCIPacket(type, bytes))
        }
        transport.inject(packets)
        await transport.drain()
        // Still alive and answering.
        try await controller.send(Reset())
    }
}

extension HCIPacket {
    /// A Command Complete with no return parameters at all (opcode 0: credits only).
    func withoutStatus() -> HCIPacket {
        var copy = self
        copy.bytes.removeLast()
        copy.bytes[1] -= 1
        return copy
    }
}
