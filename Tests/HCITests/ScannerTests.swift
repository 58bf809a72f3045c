import BluetoothCore
@testable import HCI
import HCITransport
import Testing
import TestSupport

/// The scanner on a scripted controller: which commands go out, when, and what reaches
/// each consumer.
@Suite struct ScannerTests {
    @Test func extendedCommandsWhenTheControllerHasThem() async throws {
        let rig = try await ScanRig(ScanChip(extended: true))
        let session = try await rig.scanner.scan { _ in }
        #expect(rig.scanCommands == ["ext params phys 1 [passive 160/160] policy 0", "ext enable dup 0"])
        await session.stop()
        #expect(rig.scanCommands.last == "ext disable dup 0")
        #expect(rig.scanCommands.count == 3)
    }

    @Test func legacyCommandsOtherwise() async throws {
        let rig = try await ScanRig(ScanChip(extended: false))
        let parameters = try ScanParameters(active: true, interval: .milliseconds(50), window: .milliseconds(25), filterPolicy: .basicFiltered, ownAddressType: .random)
        let session = try await rig.scanner.scan(parameters: parameters) { _ in }
        #expect(rig.scanCommands == ["params active 80/40 policy 1", "enable dup 0"])
        #expect(rig.transport.sent.contains { $0.bytes == LESetScanParameters(leScanType: .active, leScanInterval: 80, leScanWindow: 40, ownAddressType: .random, scanningFilterPolicy: .basicFiltered).encode() })
        await session.stop()
        #expect(rig.scanCommands == ["params active 80/40 policy 1", "enable dup 0", "disable dup 0"])
    }

    @Test func aCallerCanForceEitherKind() async throws {
        let rig = try await ScanRig(ScanChip(extended: true))
        let session = try await rig.scanner.scan(parameters: try ScanParameters(useExtendedCommands: false)) { _ in }
        #expect(rig.scanCommands == ["params passive 160/160 policy 0", "enable dup 0"])
        await session.stop()

        let old = try await ScanRig(ScanChip(extended: false))
        await #expect(throws: HCIError.self) {
            _ = try await old.scanner.scan(parameters: try ScanParameters(useExtendedCommands: true)) { _ in }
        }
        #expect(old.scanCommands.isEmpty)
    }

    @Test func controllerDuplicateFilteringIsAnOption() async throws {
        let rig = try await ScanRig(ScanChip(extended: true))
        let session = try await rig.scanner.scan(parameters: try ScanParameters(controllerFiltersDuplicates: true)) { _ in }
        #expect(rig.scanCommands.last == "ext enable dup 1")
        await session.stop()
    }

    @Test func codedPHYOnlyWhereSupported() async throws {
        let plain = try await ScanRig(ScanChip(extended: true))
        await #expect(throws: HCIError.self) {
            _ = try await plain.scanner.scan(parameters: try ScanParameters(codedPHY: true)) { _ in }
        }
        let coded = try await ScanRig(ScanChip(extended: true, coded: true))
        let session = try await coded.scanner.scan(parameters: try ScanParameters(codedPHY: true)) { _ in }
        #expect(coded.scanCommands.first == "ext params phys 5 [passive 160/160, passive 160/160] policy 0")
        await session.stop()
    }

    @Test func bothReportKindsReachTheConsumerWhicheverCommandsWereUsed() async throws {
        for extendedChip in [true, false] {
            let rig = try await ScanRig(ScanChip(extended: extendedChip))
            let collector = Collector()
            let session = try await rig.scanner.scan(onAdvertisement: collector.handler)
            await rig.inject([legacy(.advNonconnInd, data: [1]), extended(extendedReport([.legacy], data: [2]))])
            #expect(collector.advertisements.map(\.advertisingData.bytes) == [[1], [2]])
            #expect(rig.scanner.statistics.reports == 2)
            await session.stop()
        }
    }

    @Test func theStreamStartsAndStopsScanning() async throws {
        let rig = try await ScanRig()
        let scanner = rig.scanner
        let reader = Task { () -> Advertisement? in
            // The stream lives only in this loop: leaving it ends the stream.
            for try await advertisement in scanner.advertisements() { return advertisement }
            return nil
        }
        try await waitUntil { rig.scanCommands.count == 2 }
        await rig.inject(legacy(.advNonconnInd, beaconAddress))
        let first = try await reader.value
        #expect(first?.address == DeviceAddress(beaconAddress, type: .random))
        // Leaving the loop ends the stream; the last consumer gone, scanning stops.
        try await waitUntil { rig.scanCommands.count == 3 }
        #expect(rig.scanCommands.last == "ext disable dup 0")
    }

    @Test func aFailureToStartIsTheStreamsError() async throws {
        var chip = ScanChip(extended: true)
        chip.enableStatus = .commandDisallowed
        let rig = try await ScanRig(chip)
        await #expect(throws: HCIError.commandFailed(LESetExtendedScanEnable.opcode, .commandDisallowed)) {
            for try await _ in rig.scanner.advertisements() {}
        }
        await #expect(throws: HCIError.commandFailed(LESetExtendedScanEnable.opcode, .commandDisallowed)) {
            _ = try await rig.scanner.scan { _ in }
        }
    }

    @Test func consumersAreCombinedAndScanningRestartsWhenTheCombinationChanges() async throws {
        let rig = try await ScanRig()
        let passive = try await rig.scanner.scan(parameters: .init()) { _ in }
        #expect(rig.scanCommands == ["ext params phys 1 [passive 160/160] policy 0", "ext enable dup 0"])
        // Same parameters: nothing to change.
        let same = try await rig.scanner.scan(parameters: .init()) { _ in }
        #expect(rig.scanCommands.count == 2)
        let active = try await rig.scanner.scan(parameters: try ScanParameters(active: true, interval: .milliseconds(60), window: .milliseconds(30))) { _ in }
        #expect(Array(rig.scanCommands.dropFirst(2)) == ["ext disable dup 0", "ext params phys 1 [active 96/96] policy 0", "ext enable dup 0"])
        await active.stop()
        #expect(Array(rig.scanCommands.dropFirst(5)) == ["ext disable dup 0", "ext params phys 1 [passive 160/160] policy 0", "ext enable dup 0"])
        await same.stop()
        #expect(rig.scanCommands.count == 8)
        await passive.stop()
        #expect(rig.scanCommands.last == "ext disable dup 0")
        #expect(rig.scanCommands.count == 9)
    }

    /// A new consumer makes the scanner stop and restart the controller's scan: a chain
    /// the controller was reporting is never finished, so its start is dropped and counted
    /// instead of being glued to the next advertisement of the same set.
    @Test func aReconfigurationMidChainDropsTheStart() async throws {
        let rig = try await ScanRig()
        let collector = Collector()
        let passive = try await rig.scanner.scan(parameters: .init(), onAdvertisement: collector.handler)
        await rig.inject(extended(extendedReport([], sid: 1, status: .incompleteMoreToCome, data: [1])))
        let active = try await rig.scanner.scan(parameters: try ScanParameters(active: true)) { _ in }
        #expect(rig.scanCommands.count == 5)
        await rig.inject(extended(extendedReport([], sid: 1, status: .incompleteMoreToCome, data: [2])))
        await rig.inject(extended(extendedReport([], sid: 1, data: [3])))
        #expect(collector.advertisements.map(\.advertisingData.bytes) == [[2, 3]])
        #expect(rig.scanner.statistics.unfinishedAssemblies == 1)
        await active.stop()
        await passive.stop()
    }

    @Test func combiningKeepsEveryConsumersDemands() throws {
        let slow = try ScanParameters(interval: .milliseconds(200), window: .milliseconds(20), filterPolicy: .basicFiltered)
        let fast = try ScanParameters(interval: .milliseconds(50), window: .milliseconds(10), filterPolicy: .basicFiltered)
        let combined = try #require(try ScanConfiguration.combining([slow, fast], info: nil))
        #expect(combined.intervalUnits == 80 && combined.windowUnits == 32)
        #expect(combined.filterPolicy == .basicFiltered, "every consumer asked for the accept list")
        let open = try #require(try ScanConfiguration.combining([slow, .init()], info: nil))
        #expect(open.filterPolicy == .basicUnfiltered)
        #expect(!open.extended, "no controller information: legacy")
        #expect(throws: HCIError.self) {
            try ScanConfiguration.combining([try ScanParameters(useExtendedCommands: false), try ScanParameters(useExtendedCommands: true)], info: nil)
        }
        #expect(try ScanConfiguration.combining([], info: nil) == nil)
    }

    @Test func eachConsumerHasItsOwnFilterAndPolicy() async throws {
        let rig = try await ScanRig()
        let everything = Collector()
        let firsts = Collector()
        let onlyBeacon = Collector()
        let a = try await rig.scanner.scan(onAdvertisement: everything.handler)
        let b = try await rig.scanner.scan(matching: ScanFilter(duplicates: .firstPerDevice), onAdvertisement: firsts.handler)
        let c = try await rig.scanner.scan(matching: ScanFilter(minimumRSSI: -60, addresses: [DeviceAddress(beaconAddress, type: .random)]), onAdvertisement: onlyBeacon.handler)
        await rig.inject([
            legacy(.advNonconnInd, hrmAddress), legacy(.advNonconnInd, beaconAddress, rssi: -70),
            legacy(.advNonconnInd, hrmAddress), legacy(.advNonconnInd, beaconAddress, rssi: -40),
        ])
        #expect(everything.advertisements.count == 4)
        #expect(firsts.advertisements.map(\.address.address) == [hrmAddress, beaconAddress])
        #expect(onlyBeacon.advertisements.map(\.rssi) == [-40])
        await b.stop()
        await rig.inject(legacy(.advNonconnInd, hrmAddress))
        #expect(firsts.advertisements.count == 2)
        #expect(everything.advertisements.count == 5)
        await a.stop()
        await c.stop()
    }

    @Test func activeScanningMergesAndStopFlushesWhatIsHeld() async throws {
        let rig = try await ScanRig()
        let collector = Collector()
        let session = try await rig.scanner.scan(parameters: try ScanParameters(active: true), onAdvertisement: collector.handler)
        await rig.inject([extended(extendedReport(adInd, data: [1])), extended(extendedReport(adScanResponse, data: [2]))])
        #expect(collector.advertisements.count == 1)
        #expect(collector.advertisements.first?.scanResponseData?.bytes == [2])
        await rig.inject(extended(extendedReport(adInd, beaconAddress, data: [3])))
        #expect(collector.advertisements.count == 1, "held for its scan response")
        rig.clock.advance(milliseconds: 250)
        await rig.inject(extended(extendedReport([.legacy], hrmAddress, data: [4])))
        #expect(collector.advertisements.map(\.advertisingData.bytes) == [[1], [3], [4]], "aged out before the new report")
        await rig.inject(extended(extendedReport(adInd, beaconAddress, data: [5])))
        await session.stop()
        #expect(collector.advertisements.last?.advertisingData.bytes == [5], "flushed on stop")
        #expect(collector.advertisements.last?.scanResponseData == nil)
    }

    @Test func scanningResumesAfterAHardwareError() async throws {
        let rig = try await ScanRig()
        let collector = Collector()
        let session = try await rig.scanner.scan(onAdvertisement: collector.handler)
        #expect(rig.scanCommands.count == 2)
        rig.transport.inject([HCIPacket(.event, [0x10, 0x01, 0x42])])
        try await waitUntil { rig.scanCommands.count == 4 }
        #expect(Array(rig.scanCommands.dropFirst(2)) == ["ext params phys 1 [passive 160/160] policy 0", "ext enable dup 0"])
        await rig.inject(legacy(.advNonconnInd))
        #expect(collector.advertisements.count == 1)
        await session.stop()
        #expect(rig.scanCommands.last == "ext disable dup 0")
    }

    @Test func aClosedTransportEndsTheStreams() async throws {
        let rig = try await ScanRig()
        let stream = rig.scanner.advertisements()
        try await waitUntil { rig.scanCommands.count == 2 }
        rig.controller.close()
        await #expect(throws: HCIError.transportClosed(nil)) {
            for try await _ in stream {}
        }
    }

    @Test func randomReportEventsNeverTrapTheScanner() async throws {
        let rig = try await ScanRig()
        let counter = Lock(0)
        let a = try await rig.scanner.scan(parameters: try ScanParameters(active: true)) { _ in counter.withLock { $0 += 1 } }
        let b = try await rig.scanner.scan(matching: ScanFilter(duplicates: .whenRSSIChanges(byMoreThan: 3, orEvery: .milliseconds(100)), trackedDeviceLimit: 8)) { _ in }
        var random = SeededRandom(seed: 0xB1E)
        var packets: [HCIPacket] = []
        packets.reserveCapacity(100_000)
        for _ in 0..<100_000 {
            let code: UInt8 = [0x02, 0x0D, 0x0B].randomElement(using: &random)!
            var bytes: [UInt8] = [0x3E, 0, code, UInt8.random(in: 1...3, using: &random)] + random.bytes(lengths: 0...100)
            bytes[1] = UInt8(bytes.count - 2)
            packets.append(HCIPacket(.event, bytes))
        }
        rig.transport.inject(packets)
        await rig.transport.drain()
        #expect(rig.scanner.statistics.reports > 0)
        await a.stop()
        await b.stop()
        #expect(counter.withLock { $0 } > 0)
    }
}
