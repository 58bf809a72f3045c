import BluetoothCore
@testable import HCI
import Testing
import TestSupport

/// The report pipeline alone, with scripted timestamps: report kinds, scan response
/// merging and its flush rules, extended reassembly and its bounds.
@Suite struct ScanPipelineTests {
    /// Feeds events at the given times (ms) and returns everything that came out.
    func run(_ pipeline: inout ScanPipeline, _ events: [(UInt64, LEMetaEvent)]) -> [Advertisement] {
        var out: [Advertisement] = []
        for (milliseconds, event) in events {
            pipeline.process(event, timestamp: milliseconds * 1_000_000)
            out += pipeline.output
            pipeline.output.removeAll()
        }
        return out
    }

    @Test func legacyReportTypesMapOntoTheFlags() {
        var pipeline = ScanPipeline()
        let types: [(LEAdvertisingReport.EventType, Advertisement.EventType)] = [
            (.advInd, [.legacy, .connectable, .scannable]),
            (.advDirectInd, [.legacy, .connectable, .directed]),
            (.advScanInd, [.legacy, .scannable]),
            (.advNonconnInd, [.legacy]),
            (.scanRsp, [.legacy, .scanResponse, .scanResponseOnly]),
        ]
        for (index, (type, flags)) in types.enumerated() {
            let out = run(&pipeline, [(UInt64(index), legacy(type, rssi: 127))])
            #expect(out.count == 1)
            #expect(out.first?.eventType == flags, "\(type)")
            #expect(out.first?.rssi == nil)
            #expect(out.first?.address == DeviceAddress(hrmAddress, type: .random))
            #expect(out.first?.secondaryPHY == nil && out.first?.advertisingSID == nil)
        }
        #expect(run(&pipeline, [(9, legacy(.init(rawValue: 9)))]).isEmpty)
        #expect(pipeline.statistics.malformedReports == 1)
        #expect(pipeline.statistics.unpairedScanResponses == 1)
    }

    @Test func extendedReportsCarryTheirExtraFields() {
        var pipeline = ScanPipeline()
        let out = run(&pipeline, [(5, extended(extendedReport([.connectable], sid: 3, data: [1, 2, 3], rssi: -61, secondaryPHY: .le2M, txPower: -4)))])
        let advertisement = out.first
        #expect(advertisement?.eventType == [.connectable])
        #expect(advertisement?.advertisingSID == 3)
        #expect(advertisement?.secondaryPHY == .le2M)
        #expect(advertisement?.primaryPHY == .le1M)
        #expect(advertisement?.txPower == -4)
        #expect(advertisement?.rssi == -61)
        #expect(advertisement?.advertisingData.bytes == [1, 2, 3])
        #expect(advertisement?.timestamp == 5_000_000)
    }

    @Test func directedReportsNameTheirTarget() {
        var pipeline = ScanPipeline()
        let event = LEMetaEvent.directedAdvertisingReport(LEDirectedAdvertisingReport(reports: [.init(
            addressType: .public, address: hrmAddress, directAddressType: .random, directAddress: BluetoothAddress(0x4000_0000_0001), rssi: -40)]))
        let out = run(&pipeline, [(0, event)])
        #expect(out.first?.eventType == [.legacy, .connectable, .directed])
        #expect(out.first?.directAddress == DeviceAddress(BluetoothAddress(0x4000_0000_0001), type: .random))
    }

    @Test func anonymousAndReservedAddressTypesAreCountedNotDelivered() {
        var pipeline = ScanPipeline()
        var anonymous = extendedReport([])
        anonymous.addressType = .anonymous
        var reserved = extendedReport([])
        reserved.addressType = ReportedAddressType(rawValue: 0x09)
        #expect(run(&pipeline, [(0, extended(anonymous, reserved))]).isEmpty)
        #expect(pipeline.statistics.anonymousReports == 1)
        #expect(pipeline.statistics.malformedReports == 1)
    }

    // MARK: Scan response merging

    @Test func activeScanningMergesTheScanResponse() {
        for kind in ["legacy", "extended"] {
            var pipeline = ScanPipeline()
            pipeline.expectScanResponses = true
            let advertisement = kind == "legacy" ? legacy(.advInd, data: [2, 1, 6], rssi: -50) : extended(extendedReport(adInd, data: [2, 1, 6], rssi: -50))
            let response = kind == "legacy" ? legacy(.scanRsp, data: [3, 0xFF, 1, 2], rssi: -48) : extended(extendedReport(adScanResponse, data: [3, 0xFF, 1, 2], rssi: -48))
            #expect(run(&pipeline, [(0, advertisement)]).isEmpty, "held until the response")
            let out = run(&pipeline, [(1, response)])
            #expect(out.count == 1, "\(kind)")
            #expect(out.first?.eventType == [.legacy, .connectable, .scannable, .scanResponse])
            #expect(out.first?.advertisingData.bytes == [2, 1, 6])
            #expect(out.first?.scanResponseData?.bytes == [3, 0xFF, 1, 2])
            #expect(out.first?.rssi == -48)
            #expect(out.first?.timestamp == 1_000_000)
            #expect(pipeline.statistics.mergedScanResponses == 1)
        }
    }

    @Test func passiveScanningHoldsNothing() {
        var pipeline = ScanPipeline()
        let out = run(&pipeline, [(0, legacy(.advInd))])
        #expect(out.count == 1 && out.first?.scanResponseData == nil)
    }

    @Test func aSecondAdvertisementPushesTheHeldOneOutAlone() {
        var pipeline = ScanPipeline()
        pipeline.expectScanResponses = true
        let out = run(&pipeline, [(0, legacy(.advInd, data: [1])), (10, legacy(.advInd, data: [2])), (11, legacy(.scanRsp, data: [9]))])
        #expect(out.map(\.advertisingData.bytes) == [[1], [2]])
        #expect(out.map { $0.scanResponseData?.bytes } == [nil, [9]])
        #expect(pipeline.statistics.heldAdvertisementsDeliveredAlone == 1)
    }

    @Test func heldAdvertisementsOlderThanTheAgeLeaveWithTheNextReport() {
        var pipeline = ScanPipeline()
        pipeline.expectScanResponses = true
        // Another device's report at 199 ms does not flush; one at 200 ms does, first.
        var out = run(&pipeline, [(0, legacy(.advInd, data: [1])), (199, legacy(.advNonconnInd, beaconAddress))])
        #expect(out.map(\.address.address) == [beaconAddress])
        out = run(&pipeline, [(200, legacy(.advNonconnInd, beaconAddress))])
        #expect(out.map(\.address.address) == [hrmAddress, beaconAddress])
        // A late response now stands alone.
        out = run(&pipeline, [(201, legacy(.scanRsp, data: [9]))])
        #expect(out.first?.eventType.contains(.scanResponseOnly) == true)
        #expect(out.first?.advertisingData == .empty)
    }

    @Test func theNumberHeldIsBoundedOldestFirst() {
        var pipeline = ScanPipeline()
        pipeline.expectScanResponses = true
        let capacity = ScanResponseMerger.defaultCapacity
        let events = (0..<capacity + 2).map { (UInt64(0), legacy(.advInd, BluetoothAddress(UInt64(0xC000_0000_0000) + UInt64($0)))) }
        let out = run(&pipeline, events)
        #expect(out.map(\.address.address) == [BluetoothAddress(0xC000_0000_0000), BluetoothAddress(0xC000_0000_0001)])
        #expect(pipeline.merger.held.count == capacity)
        pipeline.flushAll()
        #expect(pipeline.output.count == capacity)
        #expect(pipeline.merger.held.isEmpty)
    }

    // MARK: Extended reassembly

    @Test func piecesAreJoinedPerAddressAndSID() {
        var pipeline = ScanPipeline()
        let out = run(&pipeline, [
            (0, extended(extendedReport([], sid: 1, status: .incompleteMoreToCome, data: [1, 1]))),
            (1, extended(extendedReport([], beaconAddress, sid: 1, status: .incompleteMoreToCome, data: [7]))),
            (2, extended(extendedReport([], sid: 2, data: [5]))),
            (3, extended(extendedReport([], sid: 1, status: .incompleteMoreToCome, data: [2]))),
            (4, extended(extendedReport([], sid: 1, data: [3]))),
            (5, extended(extendedReport([], beaconAddress, sid: 1, status: .incompleteTruncated, data: [8]))),
        ])
        #expect(out.map(\.advertisingData.bytes) == [[5], [1, 1, 2, 3], [7, 8]])
        #expect(out.map(\.isTruncated) == [false, false, true])
        #expect(pipeline.statistics.reassembledAdvertisements == 2)
        #expect(pipeline.statistics.truncatedAdvertisements == 1)
        #expect(pipeline.reassembly.inProgress.isEmpty)
    }

    @Test func aTruncatedSinglePieceIsDeliveredMarked() {
        var pipeline = ScanPipeline()
        let out = run(&pipeline, [(0, extended(extendedReport([], status: .incompleteTruncated, data: [1])))])
        #expect(out.first?.isTruncated == true)
    }

    @Test func oversizedAdvertisementsAreDroppedWhole() {
        var pipeline = ScanPipeline()
        let piece = [UInt8](repeating: 0xAA, count: 229)
        // 8 x 229 = 1832 > 1650: dropped, and its remaining pieces swallowed.
        var events = (0..<7).map { (UInt64($0), extended(extendedReport([], sid: 4, status: .incompleteMoreToCome, data: piece))) }
        events.append((8, extended(extendedReport([], sid: 4, data: piece))))
        events.append((9, extended(extendedReport([], sid: 4, data: [1]))))
        let out = run(&pipeline, events)
        #expect(out.map(\.advertisingData.bytes) == [[1]])
        #expect(pipeline.statistics.oversizedAdvertisements == 1)
        // Exactly 1650 is fine.
        let big = [UInt8](repeating: 0xBB, count: 250)
        let fits: [(UInt64, LEMetaEvent)] = (0..<6).map { (UInt64(10 + $0), extended(extendedReport([], sid: 5, status: .incompleteMoreToCome, data: big))) }
            + [(20, extended(extendedReport([], sid: 5, data: Array(big.prefix(150)))))]
        #expect(run(&pipeline, fits).first?.advertisingData.bytes.count == 1650)
        // One byte more, arriving with the last piece, is dropped too.
        let over: [(UInt64, LEMetaEvent)] = (0..<6).map { (UInt64(30 + $0), extended(extendedReport([], sid: 6, status: .incompleteMoreToCome, data: big))) }
            + [(40, extended(extendedReport([], sid: 6, data: Array(big.prefix(151)))))]
        #expect(run(&pipeline, over).count == 0)
        #expect(pipeline.statistics.oversizedAdvertisements == 2)
    }

    @Test func tooManyAssembliesAbandonTheOldest() {
        var pipeline = ScanPipeline()
        let limit = ExtendedReportReassembly.defaultMaximumInProgress
        let starts = (0...limit).map { (UInt64($0), extended(extendedReport([], BluetoothAddress(UInt64(0xD000_0000_0000) + UInt64($0)), sid: 0, status: .incompleteMoreToCome, data: [UInt8($0)]))) }
        #expect(run(&pipeline, starts).isEmpty)
        #expect(pipeline.statistics.abandonedAssemblies == 1)
        #expect(pipeline.reassembly.inProgress.count == limit)
        // The abandoned first one finishes as only its last piece; the second one whole.
        let out = run(&pipeline, [
            (50, extended(extendedReport([], BluetoothAddress(0xD000_0000_0000), sid: 0, data: [0xEE]))),
            (51, extended(extendedReport([], BluetoothAddress(0xD000_0000_0001), sid: 0, data: [0xEE]))),
        ])
        #expect(out.map(\.advertisingData.bytes) == [[0xEE], [1, 0xEE]])
    }

    /// A chain whose end never came (the controller must end one with "complete" or
    /// "truncated", Vol 4 Part E 7.7.65.13; a faulty one may not) must not be glued to the
    /// device's next advertisement: no piece of one chain can come later than the longest
    /// AuxOffset (8191 x 300 us) after the one before it.
    @Test func aChainWhoseEndNeverCameIsNotGluedToTheNextAdvertisement() {
        var pipeline = ScanPipeline()
        let out = run(&pipeline, [  // times in milliseconds
            (0, extended(extendedReport([], sid: 3, status: .incompleteMoreToCome, data: [1, 1]))),
            // 3.001 s later: a new chain, then a single complete report, from the same set.
            (3001, extended(extendedReport([], sid: 3, status: .incompleteMoreToCome, data: [2]))),
            (3002, extended(extendedReport([], sid: 3, data: [3]))),
            (6000, extended(extendedReport([], sid: 3, status: .incompleteMoreToCome, data: [4]))),
            (9001, extended(extendedReport([], sid: 3, data: [5]))),
            // Pieces 2.5 s apart (past the longest AuxOffset, within the host's margin) still belong together.
            (10000, extended(extendedReport([], sid: 3, status: .incompleteMoreToCome, data: [6]))),
            (12500, extended(extendedReport([], sid: 3, data: [7]))),
        ])
        #expect(out.map(\.advertisingData.bytes) == [[2, 3], [5], [6, 7]])
        #expect(pipeline.statistics.unfinishedAssemblies == 2)
        #expect(pipeline.statistics.reassembledAdvertisements == 2)
        #expect(pipeline.reassembly.inProgress.isEmpty)
    }

    /// A device that went away mid-chain: its start is dropped and counted at the first
    /// report (of any device) more than 3 s later, not kept until its key comes back; a
    /// chain already dropped as oversized is not counted again.
    @Test func anOpenChainIsDroppedAtAnyReportOnceItIsStale() {
        var pipeline = ScanPipeline()
        let piece = [UInt8](repeating: 0xAA, count: 229)
        let other = BluetoothAddress(0xD000_0000_0001)
        let out = run(&pipeline, [
            (0, extended(extendedReport([], sid: 3, status: .incompleteMoreToCome, data: [1]))),
        ] + (0..<8).map { (UInt64(1 + $0), extended(extendedReport([], sid: 4, status: .incompleteMoreToCome, data: piece))) } + [
            (3100, extended(extendedReport([], other, sid: 0, data: [9]))),
        ])
        #expect(out.map(\.advertisingData.bytes) == [[9]])
        #expect(pipeline.reassembly.inProgress.isEmpty)
        #expect(pipeline.statistics.oversizedAdvertisements == 1)
        #expect(pipeline.statistics.unfinishedAssemblies == 1)
    }

    /// Scanning stopped mid-chain: the rest will never come, so the start is dropped and
    /// counted, not joined to what the next scan hears.
    @Test func stoppingMidChainDropsTheStart() {
        var pipeline = ScanPipeline()
        _ = run(&pipeline, [(0, extended(extendedReport([], sid: 3, status: .incompleteMoreToCome, data: [1])))])
        pipeline.scanningStopped()
        let out = run(&pipeline, [
            (1, extended(extendedReport([], sid: 3, status: .incompleteMoreToCome, data: [2]))),
            (2, extended(extendedReport([], sid: 3, data: [3]))),
        ])
        #expect(out.map(\.advertisingData.bytes) == [[2, 3]])
        #expect(pipeline.statistics.unfinishedAssemblies == 1)
    }

    @Test func aReservedDataStatusIsCountedAndDropsItsAssembly() {
        var pipeline = ScanPipeline()
        let out = run(&pipeline, [
            (0, extended(extendedReport([], sid: 1, status: .incompleteMoreToCome, data: [1]))),
            (1, extended(extendedReport([], sid: 1, status: .reserved, data: [2]))),
        ])
        #expect(out.isEmpty)
        #expect(pipeline.statistics.malformedReports == 1)
        #expect(pipeline.reassembly.inProgress.isEmpty)
    }

    /// One device, two advertising sets (SIDs 1 and 2) from the same address: set 2's
    /// advertisement does not push out set 1's held one, and each response completes its
    /// own set. A response that names no set (SID 0xFF) still takes the held one.
    @Test func scanResponsesPairWithinTheirAdvertisingSet() {
        var pipeline = ScanPipeline()
        pipeline.expectScanResponses = true
        let scannable: LEExtendedAdvertisingReport.EventType = [.scannable]
        let response: LEExtendedAdvertisingReport.EventType = [.scannable, .scanResponse]
        let out = run(&pipeline, [
            (0, extended(extendedReport(scannable, sid: 1, data: [1]))),
            (1, extended(extendedReport(scannable, sid: 2, data: [2]))),
            (2, extended(extendedReport(response, sid: 2, data: [0x22]))),
            (3, extended(extendedReport(response, sid: 1, data: [0x11]))),
            (4, extended(extendedReport(scannable, sid: 3, data: [3]))),
            (5, extended(extendedReport(response, sid: 0xFF, data: [0x33]))),
        ])
        #expect(out.map { [$0.advertisingData.bytes, $0.scanResponseData?.bytes ?? []] } == [[[2], [0x22]], [[1], [0x11]], [[3], [0x33]]])
        #expect(out.map(\.advertisingSID) == [2, 1, 3])
        #expect(pipeline.statistics.mergedScanResponses == 3)
        #expect(pipeline.statistics.heldAdvertisementsDeliveredAlone == 0)
    }

    @Test func extendedScanResponsesArriveInPiecesToo() {
        var pipeline = ScanPipeline()
        pipeline.expectScanResponses = true
        let out = run(&pipeline, [
            (0, extended(extendedReport([.connectable, .scannable], sid: 2, data: [1]))),
            (1, extended(extendedReport([.connectable, .scannable, .scanResponse], sid: 2, status: .incompleteMoreToCome, data: [2]))),
            (2, extended(extendedReport([.connectable, .scannable, .scanResponse], sid: 2, data: [3]))),
        ])
        #expect(out.count == 1)
        #expect(out.first?.scanResponseData?.bytes == [2, 3])
        #expect(out.first?.eventType == [.connectable, .scannable, .scanResponse])
    }

    @Test func randomReportEventsNeverTrapThePipeline() async {
        await cpuBound {
            var random = SeededRandom(seed: 0x5CA9)
            var pipeline = ScanPipeline()
            pipeline.expectScanResponses = true
            var delivered = 0
            for step in 0..<100_000 {
                await yieldPeriodically(iteration: step)
                let code: UInt8 = [0x02, 0x0D, 0x0B].randomElement(using: &random)!
                // Valid-looking reports most of the time so the later stages see traffic.
                var bytes = random.bytes(lengths: 0...80)
                if step % 2 == 0, let event = plausibleEvent(code: code, random: &random) { bytes = event }
                var reader = ByteReader([code] + bytes)
                guard let event = try? LEMetaEvent(decoding: &reader) else { continue }
                pipeline.process(event, timestamp: UInt64(step) * 1_000_000)
                delivered += pipeline.output.count
                pipeline.output.removeAll(keepingCapacity: true)
                #expect(pipeline.reassembly.inProgress.count <= ExtendedReportReassembly.defaultMaximumInProgress)
                #expect(pipeline.merger.held.count <= ScanResponseMerger.defaultCapacity)
            }
            #expect(delivered > 1000)
        }
    }

    /// An extended or legacy report event with random fields and a few addresses, so
    /// merging and reassembly really engage.
    func plausibleEvent(code: UInt8, random: inout SeededRandom) -> [UInt8]? {
        let address = BluetoothAddress(0xC000_0000_0000 + UInt64.random(in: 0..<4, using: &random))
        var writer = ByteWriter()
        switch code {
        case 0x02:
            let type = LEAdvertisingReport.EventType(rawValue: UInt8.random(in: 0...5, using: &random))
            LEAdvertisingReport(reports: [.init(eventType: type, addressType: .random, address: address, data: random.bytes(lengths: 0...31), rssi: Int8.random(in: -100...127, using: &random))]).encode(into: &writer)
        case 0x0D:
            var report = extendedReport(
                LEExtendedAdvertisingReport.EventType(rawValue: UInt16.random(in: 0...0x7F, using: &random)), address,
                sid: UInt8.random(in: 0...2, using: &random), data: random.bytes(lengths: 0...229))
            report.addressType = ReportedAddressType(rawValue: UInt8.random(in: 0...2, using: &random))
            LEExtendedAdvertisingReport(reports: [report]).encode(into: &writer)
        default:
            return nil
        }
        return writer.bytes
    }
}
