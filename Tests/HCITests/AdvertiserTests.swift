import BluetoothCore
@testable import HCI
import HCITransport
import Testing
import TestSupport

/// A FakeChip that also answers the advertising commands, legacy or extended.
struct AdvertisingChip: Sendable {
    var chip = FakeChip()
    var maximumDataLength: UInt16 = 1650
    var selectedTxPower: Int8 = 3
    var refuse: HCIOpcode?

    static let legacyCommands: [any HCICommand.Type] = [
        LESetRandomAddress.self, LESetAdvertisingParameters.self, LESetAdvertisingData.self,
        LESetScanResponseData.self, LESetAdvertisingEnable.self,
    ]
    static let extendedCommands: [any HCICommand.Type] = [
        LESetAdvertisingSetRandomAddress.self, LESetExtendedAdvertisingParameters.self, LESetExtendedAdvertisingData.self,
        LESetExtendedScanResponseData.self, LESetExtendedAdvertisingEnable.self, LEReadMaximumAdvertisingDataLength.self,
        LERemoveAdvertisingSet.self,
    ]

    static var legacy: AdvertisingChip {
        var chip = AdvertisingChip()
        chip.chip.leFeatures = [.leEncryption]
        chip.chip.supported = [LEReadBufferSizeV1.self] + legacyCommands
        return chip
    }

    static var extended: AdvertisingChip {
        var chip = AdvertisingChip()
        chip.chip.supported += legacyCommands + extendedCommands
        return chip
    }

    func answer(_ packet: HCIPacket) -> [HCIPacket] {
        guard let opcode = opcodes([packet]).first else { return [] }
        if opcode == refuse { return [chip.complete(opcode, []).withStatus(.commandDisallowed)] }
        switch opcode {
        case LESetExtendedAdvertisingParameters.opcode:
            return [chip.complete(opcode, [UInt8(bitPattern: selectedTxPower)])]
        case LEReadMaximumAdvertisingDataLength.opcode:
            return [chip.complete(opcode, [UInt8(maximumDataLength & 0xFF), UInt8(maximumDataLength >> 8)])]
        case _ where (Self.legacyCommands + Self.extendedCommands).contains(where: { $0.opcode == opcode }):
            return [chip.complete(opcode, [])]
        default:
            return chip.answer(packet)
        }
    }
}

@Suite struct AdvertiserTests {
    static let staticAddress = BluetoothAddress(0xC1C2_C3C4_C5C6)

    /// A powered-on controller and an advertiser; `sent()` is every command after bring-up.
    struct Rig {
        let controller: HCIController
        let transport: ScriptedTransport
        let advertiser: Advertiser
        let bringUp: Int

        func sent() -> [[UInt8]] { transport.sent[bringUp...].filter { $0.type == .command }.map(\.bytes) }
        func sentSince(_ count: Int) -> [[UInt8]] { Array(sent()[count...]) }

        func inject(_ event: HCIEvent) async {
            transport.inject([HCIPacket(.event, event.encode())])
            await transport.drain()
        }
    }

    func rig(_ chip: AdvertisingChip) async throws -> Rig {
        let transport = ScriptedTransport { chip.answer($0) }
        let controller = HCIController(transport: transport)
        try controller.start()
        try await controller.powerOn()
        let advertiser = Advertiser(controller: controller, randomStaticAddress: Self.staticAddress)
        return Rig(controller: controller, transport: transport, advertiser: advertiser, bringUp: transport.sent.count)
    }

    let name = AdvertisingData([0x02, 0x01, 0x06, 0x04, 0x09, 0x41, 0x42, 0x43])
    let response = AdvertisingData([0x03, 0xFF, 0x4C, 0x00])

    @Test func legacyConnectableWithScanResponse() async throws {
        let rig = try await rig(.legacy)
        let set = try await rig.advertiser.start(.init(kind: .connectableUndirected, interval: .milliseconds(100)), data: name, scanResponse: response)
        #expect(rig.sent() == [
            LESetAdvertisingParameters(advertisingIntervalMin: 160, advertisingIntervalMax: 160, advertisingType: .connectableUndirected, ownAddressType: .public).encode(),
            try LESetAdvertisingData(advertisingData: name.bytes).encode(),
            try LESetScanResponseData(scanResponseData: response.bytes).encode(),
            LESetAdvertisingEnable(advertisingEnable: true).encode(),
        ])
        #expect(set.address == DeviceAddress(FakeChip().address, type: .public))
        #expect(set.handle == nil && set.usesLegacyPDUs && set.selectedTxPower == nil)
        #expect(set.interval == .milliseconds(100))
        #expect(set.state == .advertising)
        try await set.stop()
        try await set.stop()
        #expect(rig.sentSince(4) == [LESetAdvertisingEnable(advertisingEnable: false).encode()])
        #expect(set.state == .stopped)
    }

    @Test func legacyNonConnectableSetsNoScanResponse() async throws {
        let rig = try await rig(.legacy)
        _ = try await rig.advertiser.start(.init(kind: .nonConnectableUndirected, interval: .milliseconds(20)), data: name)
        #expect(opcodes(rig.transport.sent[rig.bringUp...].map { $0 }) == [
            LESetAdvertisingParameters.opcode, LESetAdvertisingData.opcode, LESetAdvertisingEnable.opcode,
        ])
        #expect(rig.sent()[0] == LESetAdvertisingParameters(advertisingIntervalMin: 32, advertisingIntervalMax: 32, advertisingType: .nonConnectableUndirected, ownAddressType: .public).encode())
    }

    @Test func legacyRandomAddressesGoFirst() async throws {
        let rig = try await rig(.legacy)
        let chosen = BluetoothAddress(0xD0D1_D2D3_D4D5)
        let set = try await rig.advertiser.start(.init(kind: .scannableUndirected, ownAddress: .random(chosen)), data: name)
        #expect(rig.sent().first == LESetRandomAddress(randomAddress: chosen).encode())
        #expect(rig.sent()[1] == LESetAdvertisingParameters(advertisingIntervalMin: 160, advertisingIntervalMax: 160, advertisingType: .scannableUndirected, ownAddressType: .random).encode())
        #expect(set.address == DeviceAddress(chosen, type: .random))
        try await set.stop()
        let before = rig.sent().count
        let generated = try await rig.advertiser.start(.init(kind: .nonConnectableUndirected, ownAddress: .randomStatic), data: name)
        #expect(rig.sentSince(before).first == LESetRandomAddress(randomAddress: Self.staticAddress).encode())
        #expect(generated.address.kind == .randomStatic)
    }

    @Test func legacyControllersHaveOneSet() async throws {
        let rig = try await rig(.legacy)
        let first = try await rig.advertiser.start(.init(kind: .nonConnectableUndirected), data: name)
        await #expect(throws: AdvertisingError.legacySetInUse) {
            _ = try await rig.advertiser.start(.init(kind: .nonConnectableUndirected), data: name)
        }
        #expect(AdvertisingError.legacySetInUse.description == "this controller has only legacy advertising, whose single set is already advertising: stop that set first")
        try await first.stop()
        let second = try await rig.advertiser.start(.init(kind: .nonConnectableUndirected), data: name)
        #expect(second.state == .advertising)
    }

    @Test func extendedNonConnectableWithLongDataInFragments() async throws {
        let rig = try await rig(.extended)
        let long = AdvertisingData((0..<300).map { UInt8(truncatingIfNeeded: $0) })
        let set = try await rig.advertiser.start(.init(kind: .nonConnectableUndirected, interval: .milliseconds(200), txPower: 5), data: long)
        #expect(rig.sent() == [
            try LESetExtendedAdvertisingParameters(advertisingHandle: 0, advertisingEventProperties: [], primaryAdvertisingIntervalMin: 320, primaryAdvertisingIntervalMax: 320, ownAddressType: .public, advertisingTxPower: 5).encode(),
            try LESetExtendedAdvertisingData(advertisingHandle: 0, operation: .firstFragment, advertisingData: Array(long.bytes[..<251])).encode(),
            try LESetExtendedAdvertisingData(advertisingHandle: 0, operation: .lastFragment, advertisingData: Array(long.bytes[251...])).encode(),
            try LESetExtendedAdvertisingEnable(enable: true, sets: [.init(advertisingHandle: 0)]).encode(),
        ])
        #expect(set.handle == 0 && !set.usesLegacyPDUs)
        #expect(set.selectedTxPower == 3)
        try await set.stop()
        #expect(rig.sentSince(4) == [
            try LESetExtendedAdvertisingEnable(enable: false, sets: [.init(advertisingHandle: 0)]).encode(),
            LERemoveAdvertisingSet(advertisingHandle: 0).encode(),
        ])
    }

    @Test func extendedSetWithLegacyPDUsAndItsOwnRandomAddress() async throws {
        let rig = try await rig(.extended)
        let set = try await rig.advertiser.start(
            .init(kind: .connectableUndirected, ownAddress: .randomStatic, duration: .seconds(2), maximumEvents: 9),
            data: name, scanResponse: response)
        #expect(rig.sent() == [
            try LESetExtendedAdvertisingParameters(advertisingHandle: 0, advertisingEventProperties: [.useLegacyPDUs, .connectable, .scannable], primaryAdvertisingIntervalMin: 160, primaryAdvertisingIntervalMax: 160, ownAddressType: .random).encode(),
            LESetAdvertisingSetRandomAddress(advertisingHandle: 0, randomAddress: Self.staticAddress).encode(),
            try LESetExtendedAdvertisingData(advertisingHandle: 0, advertisingData: name.bytes).encode(),
            try LESetExtendedScanResponseData(advertisingHandle: 0, scanResponseData: response.bytes).encode(),
            try LESetExtendedAdvertisingEnable(enable: true, sets: [.init(advertisingHandle: 0, duration: 200, maxExtendedAdvertisingEvents: 9)]).encode(),
        ])
        #expect(set.usesLegacyPDUs && set.address == DeviceAddress(Self.staticAddress, type: .random))
    }

    @Test func extendedScannableSetsCarryDataInTheScanResponseOnly() async throws {
        let rig = try await rig(.extended)
        let long = AdvertisingData([UInt8](repeating: 7, count: 100))
        _ = try await rig.advertiser.start(.init(kind: .scannableUndirected, pduFormat: .extended), data: .empty, scanResponse: long)
        #expect(opcodes(rig.transport.sent[rig.bringUp...].map { $0 }) == [
            LESetExtendedAdvertisingParameters.opcode, LESetExtendedScanResponseData.opcode, LESetExtendedAdvertisingEnable.opcode,
        ])
    }

    @Test func handlesAreAllocatedUpToTheControllersSets() async throws {
        let rig = try await rig(.extended)
        #expect(rig.controller.info?.numberOfAdvertisingSets == 4)
        var sets: [AdvertisingSet] = []
        for _ in 0..<4 { sets.append(try await rig.advertiser.start(.init(kind: .nonConnectableUndirected), data: name)) }
        #expect(sets.map(\.handle) == [0, 1, 2, 3])
        await #expect(throws: AdvertisingError.noFreeAdvertisingSet(limit: 4)) {
            _ = try await rig.advertiser.start(.init(kind: .nonConnectableUndirected), data: name)
        }
        #expect(AdvertisingError.noFreeAdvertisingSet(limit: 4).description == "all 4 advertising sets of this controller are in use: stop one first")
        try await sets[1].stop()
        let again = try await rig.advertiser.start(.init(kind: .nonConnectableUndirected), data: name)
        #expect(again.handle == 1)
        #expect(sets[1].state == .stopped && again.state == .advertising)
    }

    @Test func nothingIsSentWhenTheRequestIsWrong() async throws {
        let rig = try await rig(.legacy)
        await #expect(throws: AdvertisingError.dataTooLong(what: "scan response data", length: 40, limit: 31)) {
            _ = try await rig.advertiser.start(.init(kind: .connectableUndirected), data: name, scanResponse: AdvertisingData([UInt8](repeating: 0, count: 40)))
        }
        await #expect(throws: AdvertisingError.self) {
            _ = try await rig.advertiser.start(.init(kind: .connectableUndirected, interval: .milliseconds(5)), data: name)
        }
        #expect(rig.sent().isEmpty)
        // The failed attempts held no slot.
        _ = try await rig.advertiser.start(.init(kind: .nonConnectableUndirected), data: name)
    }

    @Test func aRefusedCommandTakesDownTheHalfBuiltSet() async throws {
        var chip = AdvertisingChip.extended
        chip.refuse = LESetExtendedAdvertisingEnable.opcode
        let rig = try await rig(chip)
        await #expect(throws: AdvertisingError.controller(.commandFailed(LESetExtendedAdvertisingEnable.opcode, .commandDisallowed))) {
            _ = try await rig.advertiser.start(.init(kind: .nonConnectableUndirected), data: name)
        }
        #expect(rig.sent().last == LERemoveAdvertisingSet(advertisingHandle: 0).encode())
        #expect(rig.advertiser.state.withLock { $0.records.isEmpty })
        #expect(AdvertisingError.controller(.commandFailed(LESetExtendedAdvertisingEnable.opcode, .commandDisallowed)).description.hasPrefix("advertising failed: LE Set Extended Advertising Enable failed"))
    }

    @Test func theControllerEndingASetFreesItsHandle() async throws {
        let rig = try await rig(.extended)
        let set = try await rig.advertiser.start(.init(kind: .connectableUndirected, pduFormat: .extended), data: name)
        let before = rig.sent().count
        await rig.inject(.le(.advertisingSetTerminated(LEAdvertisingSetTerminated(status: .success, advertisingHandle: 0, connectionHandle: 0x41, numCompletedExtendedAdvertisingEvents: 3))))
        #expect(set.state == .ended(.connected(connectionHandle: 0x41)))
        try await waitUntil { rig.advertiser.state.withLock { $0.records.isEmpty } }
        #expect(rig.sentSince(before) == [LERemoveAdvertisingSet(advertisingHandle: 0).encode()])
        // Stopping an ended set sends nothing.
        try await set.stop()
        #expect(rig.sent().count == before + 1)
    }

    @Test func aLegacyConnectionEndsTheLegacySet() async throws {
        let rig = try await rig(.legacy)
        let set = try await rig.advertiser.start(.init(kind: .connectableUndirected), data: name)
        await rig.inject(.le(.connectionComplete(LEConnectionComplete(
            status: .success, connectionHandle: 0x40, role: .peripheral, peerAddressType: .random,
            peerAddress: BluetoothAddress(0xC44B_4D00_0001), connectionInterval: 24, peripheralLatency: 0,
            supervisionTimeout: 400, centralClockAccuracy: 0))))
        #expect(set.state == .ended(.connected(connectionHandle: 0x40)))
        _ = try await rig.advertiser.start(.init(kind: .connectableUndirected), data: name)
    }

    @Test func aHardwareErrorReportsEverySetEnded() async throws {
        let rig = try await rig(.extended)
        let first = try await rig.advertiser.start(.init(kind: .nonConnectableUndirected), data: name)
        let second = try await rig.advertiser.start(.init(kind: .connectableUndirected), data: name)
        var updates = rig.controller.statusUpdates().makeAsyncIterator()
        _ = await updates.next()
        rig.transport.inject([HCIPacket(.event, [0x10, 0x01, 0x42])])
        #expect(await updates.next() == .recovering(hardwareCode: 0x42))
        #expect(first.state == .ended(.controllerReset(hardwareCode: 0x42)))
        #expect(second.state == .ended(.controllerReset(hardwareCode: 0x42)))
        _ = await updates.next()
        guard case .ready? = await updates.next() else {
            Issue.record("controller did not come back")
            return
        }
        let before = rig.sent().count
        try await first.stop()
        #expect(rig.sent().count == before)
        #expect(try await rig.advertiser.start(.init(kind: .nonConnectableUndirected), data: name).handle == 0)
    }

    @Test func updatesReplaceTheData() async throws {
        let legacyRig = try await rig(.legacy)
        let legacy = try await legacyRig.advertiser.start(.init(kind: .connectableUndirected), data: name)
        try await legacy.update(data: response, scanResponse: name)
        #expect(legacyRig.sentSince(4) == [
            try LESetAdvertisingData(advertisingData: response.bytes).encode(),
            try LESetScanResponseData(scanResponseData: name.bytes).encode(),
        ])
        #expect(legacy.data == response)
        // The PDU format stays: a legacy set cannot grow past 31 bytes.
        await #expect(throws: AdvertisingError.dataTooLong(what: "advertising data", length: 32, limit: 31)) {
            try await legacy.update(data: AdvertisingData([UInt8](repeating: 0, count: 32)))
        }

        let rig = try await rig(.extended)
        let set = try await rig.advertiser.start(.init(kind: .nonConnectableUndirected, pduFormat: .extended), data: name)
        let long = AdvertisingData([UInt8](repeating: 9, count: 260))
        try await set.update(data: long)
        #expect(opcodes(rig.transport.sent.suffix(4).map { $0 }) == [
            LESetExtendedAdvertisingEnable.opcode, LESetExtendedAdvertisingData.opcode,
            LESetExtendedAdvertisingData.opcode, LESetExtendedAdvertisingEnable.opcode,
        ])
        try await set.stop()
        await #expect(throws: AdvertisingError.setNotActive) { try await set.update(data: name) }
    }

    @Test func advertisingNeedsAPoweredController() async throws {
        let controller = HCIController(transport: ScriptedTransport())
        let advertiser = Advertiser(controller: controller)
        #expect(advertiser.randomStaticAddress.isValidRandomStatic)
        await #expect(throws: AdvertisingError.controllerNotReady) {
            _ = try await advertiser.start(.init(kind: .nonConnectableUndirected), data: name)
        }
        #expect(AdvertisingError.controllerNotReady.description == "the controller is not powered on: call powerOn() before advertising")
    }
}
