import BluetoothCore
import HCI
import Testing
import TestSupport

/// LE Meta subevents: real byte sequences written from the layouts in Core Vol 4 Part E
/// 7.7.65, round trips through the subevent protocol, and malformed input.
@Suite struct EventLEMetaTests {
    func decodeLE(_ hex: String) throws -> LEMetaEvent {
        let event = try HCIEvent(decoding: Hex.bytes(hex)!)
        guard case .le(let meta) = event else { throw DecodeError.invalidValue(field: "not LE Meta", value: Int(event.code)) }
        return meta
    }

    @Test func connectionComplete() throws {
        let meta = try decodeLE("3E 13 01 00 40 00 01 01 66 55 44 33 22 C1 18 00 00 00 48 00 05")
        let expected = LEConnectionComplete(
            status: .success, connectionHandle: 0x0040, role: .peripheral, peerAddressType: .random,
            peerAddress: BluetoothAddress("C1:22:33:44:55:66")!, connectionInterval: 0x18, peripheralLatency: 0,
            supervisionTimeout: 0x48, centralClockAccuracy: 5
        )
        #expect(meta == .connectionComplete(expected))
        #expect(expected.connectionIntervalMilliseconds == 30)
        #expect(expected.supervisionTimeoutMilliseconds == 720)
        #expect(expected.peerAddressType.addressType == .random)
    }

    @Test func failedConnectionComplete() throws {
        let meta = try decodeLE("3E 13 01 3E 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00")
        guard case .connectionComplete(let complete) = meta else { throw DecodeError.trailingBytes(count: 0) }
        #expect(complete.status == .connectionFailedToBeEstablished)
        #expect(complete.role == .central)
    }

    @Test func advertisingReportWithTwoReports() throws {
        // ADV_IND from a public address with Flags, then an empty SCAN_RSP from a random one.
        let meta = try decodeLE("""
            3E 19 02 02
            00 00 01 02 03 04 05 06 03 02 01 06 C5
            04 01 F0 E0 D0 C0 B0 F0 00 B0
            """)
        #expect(meta == .advertisingReport(.init(reports: [
            .init(eventType: .advInd, addressType: .public, address: BluetoothAddress("06:05:04:03:02:01")!, data: [0x02, 0x01, 0x06], rssi: -59),
            .init(eventType: .scanRsp, addressType: .random, address: BluetoothAddress("F0:B0:C0:D0:E0:F0")!, data: [], rssi: -80),
        ])))
    }

    @Test func advertisingReportLengthsAreChecked() {
        // Data_Length 0x20 with three bytes of data behind it.
        #expect(throws: DecodeError.truncated(needed: 32, available: 4)) {
            try decodeLE("3E 0F 02 01 00 00 01 02 03 04 05 06 20 02 01 06 C5")
        }
        // 25 reports announced, one present: refused before allocating 25.
        #expect(throws: DecodeError.lengthMismatch(declared: 250, actual: 13)) {
            try decodeLE("3E 0F 02 19 00 00 01 02 03 04 05 06 02 01 06 C5 00")
        }
        // RSSI missing.
        #expect(throws: DecodeError.truncated(needed: 1, available: 0)) {
            try decodeLE("3E 0E 02 01 00 00 01 02 03 04 05 06 03 02 01 06")
        }
    }

    @Test func rssiNotAvailable() {
        let report = LEAdvertisingReport.Report(eventType: .advNonconnInd, addressType: .public, address: .zero, data: [], rssi: 127)
        #expect(report.availableRSSI == nil)
        #expect(LEAdvertisingReport.Report(eventType: .advInd, addressType: .public, address: .zero, data: [], rssi: -40).availableRSSI == -40)
    }

    @Test func extendedAdvertisingReport() throws {
        // A legacy ADV_IND seen through extended scanning: properties 0x0013, public address,
        // LE 1M, no secondary PHY, no ADI, TX power unknown, RSSI -60, Flags as data.
        let meta = try decodeLE("""
            3E 1D 0D 01
            13 00 00 01 02 03 04 05 06 01 00 FF 7F C4 00 00 00 00 00 00 00 00 00
            03 02 01 06
            """)
        guard case .extendedAdvertisingReport(let event) = meta, let report = event.reports.first else {
            Issue.record("decoded as \(meta)")
            return
        }
        #expect(event.reports.count == 1)
        #expect(report.eventType == [.connectable, .scannable, .legacy])
        #expect(report.eventType.dataStatus == .complete)
        #expect(report.addressType == .public)
        #expect(report.address == BluetoothAddress("06:05:04:03:02:01")!)
        #expect(report.primaryPHY == .le1M)
        #expect(report.secondaryPHY == .none)
        #expect(report.advertisingSID == 0xFF)
        #expect(report.availableTXPower == nil)
        #expect(report.rssi == -60)
        #expect(report.periodicAdvertisingInterval == 0)
        #expect(report.data == [0x02, 0x01, 0x06])
    }

    @Test func extendedReportEventTypeBits() {
        var type = LEExtendedAdvertisingReport.EventType(rawValue: 0x0020 | 0x0001)
        #expect(type.dataStatus == .incompleteMoreToCome)
        #expect(type.contains(.connectable))
        type.dataStatus = .incompleteTruncated
        #expect(type.rawValue == 0x0041)
        #expect(LEExtendedAdvertisingReport.EventType(rawValue: 0x0060).dataStatus == .reserved)
        // Reserved bits survive.
        #expect(LEExtendedAdvertisingReport.EventType(rawValue: 0xFF80).rawValue == 0xFF80)
    }

    @Test func extendedReportLengthsAreChecked() {
        // Data_Length 0xE5 (229) with one byte present.
        #expect(throws: DecodeError.truncated(needed: 229, available: 1)) {
            try decodeLE("3E 1B 0D 01 13 00 00 01 02 03 04 05 06 01 00 FF 7F C4 00 00 00 00 00 00 00 00 00 E5 02")
        }
        #expect(throws: DecodeError.lengthMismatch(declared: 48, actual: 24)) {
            try decodeLE("3E 1A 0D 02 13 00 00 01 02 03 04 05 06 01 00 FF 7F C4 00 00 00 00 00 00 00 00 00 00")
        }
    }

    @Test func enhancedConnectionCompleteVersions() throws {
        let v1Hex = "3E 1F 0A 00 01 00 00 02 11 22 33 44 55 66 00 00 00 00 00 00 AA BB CC DD EE 5F 28 00 00 00 F4 01 00"
        let v1 = try decodeLE(v1Hex)
        guard case .enhancedConnectionComplete(let first) = v1 else {
            Issue.record("decoded as \(v1)")
            return
        }
        #expect(first.version == .v1)
        #expect(first.subeventCode == 0x0A)
        #expect(first.peerAddressType == .publicIdentity)
        #expect(first.peerAddressType.addressType == .publicIdentity)
        #expect(first.peerResolvablePrivateAddress == BluetoothAddress("5F:EE:DD:CC:BB:AA")!)
        #expect(first.localResolvablePrivateAddress == .zero)
        #expect(first.connectionIntervalMilliseconds == 50)
        #expect(first.supervisionTimeoutMilliseconds == 5000)
        #expect(first.advertisingHandle == nil)

        let v2 = try decodeLE("3E 22 29 00 01 00 01 02 11 22 33 44 55 66 00 00 00 00 00 00 AA BB CC DD EE 5F 28 00 00 00 F4 01 00 03 FF FF")
        guard case .enhancedConnectionComplete(let second) = v2 else {
            Issue.record("decoded as \(v2)")
            return
        }
        #expect(second.version == .v2(advertisingHandle: 3, syncHandle: 0xFFFF))
        #expect(second.role == .peripheral)
        #expect(second.advertisingHandle == 3)
        #expect(second.syncHandle == 0xFFFF)
        #expect(second.subeventCode == 0x29)
        #expect(HCIEvent.le(v2).encode() == Hex.bytes("3E 22 29 00 01 00 01 02 11 22 33 44 55 66 00 00 00 00 00 00 AA BB CC DD EE 5F 28 00 00 00 F4 01 00 03 FF FF"))
        // A v2 code with a v1 body is truncated, not silently v1.
        #expect(throws: DecodeError.truncated(needed: 1, available: 0)) {
            try decodeLE("3E 1F 29 00 01 00 00 02 11 22 33 44 55 66 00 00 00 00 00 00 AA BB CC DD EE 5F 28 00 00 00 F4 01 00")
        }
    }

    @Test func longTermKeyRequest() throws {
        let meta = try decodeLE("3E 0D 05 40 00 08 07 06 05 04 03 02 01 34 12")
        #expect(meta == .longTermKeyRequest(.init(connectionHandle: 0x40, randomNumber: 0x0102_0304_0506_0708, encryptedDiversifier: 0x1234)))
    }

    @Test func connectionSubevents() throws {
        #expect(try decodeLE("3E 0A 03 00 40 00 06 00 00 00 C8 00") == .connectionUpdateComplete(.init(status: .success, connectionHandle: 0x40, connectionInterval: 6, peripheralLatency: 0, supervisionTimeout: 200)))
        #expect(try decodeLE("3E 0C 04 00 40 00 FF 49 01 00 00 00 00 00") == .readRemoteFeaturesComplete(.init(status: .success, connectionHandle: 0x40, leFeatures: 0x0149FF)))
        #expect(try decodeLE("3E 0B 07 40 00 FB 00 48 08 FB 00 48 08") == .dataLengthChange(.init(connectionHandle: 0x40, maxTxOctets: 251, maxTxTime: 2120, maxRxOctets: 251, maxRxTime: 2120)))
        #expect(try decodeLE("3E 06 0C 00 40 00 02 02") == .phyUpdateComplete(.init(status: .success, connectionHandle: 0x40, txPHY: .le2M, rxPHY: .le2M)))
        #expect(try decodeLE("3E 04 14 40 00 01") == .channelSelectionAlgorithm(.init(connectionHandle: 0x40, channelSelectionAlgorithm: 1)))
    }

    @Test func advertisingSubevents() throws {
        #expect(try decodeLE("3E 01 11") == .scanTimeout(.init()))
        #expect(try decodeLE("3E 06 12 00 01 40 00 00") == .advertisingSetTerminated(.init(status: .success, advertisingHandle: 1, connectionHandle: 0x40, numCompletedExtendedAdvertisingEvents: 0)))
        #expect(try decodeLE("3E 06 12 3C 01 00 00 05") == .advertisingSetTerminated(.init(status: .advertisingTimeout, advertisingHandle: 1, connectionHandle: 0, numCompletedExtendedAdvertisingEvents: 5)))
        #expect(try decodeLE("3E 09 13 02 01 01 02 03 04 05 C6") == .scanRequestReceived(.init(advertisingHandle: 2, scannerAddressType: .random, scannerAddress: BluetoothAddress("C6:05:04:03:02:01")!)))
        let directed = try decodeLE("3E 12 0B 01 01 01 01 02 03 04 05 46 01 0A 0B 0C 0D 0E 4F B5")
        #expect(directed == .directedAdvertisingReport(.init(reports: [.init(
            eventType: .advDirectInd, addressType: .random, address: BluetoothAddress("46:05:04:03:02:01")!,
            directAddressType: .random, directAddress: BluetoothAddress("4F:0E:0D:0C:0B:0A")!, rssi: -75
        )])))
        #expect(throws: DecodeError.trailingBytes(count: 1)) { try decodeLE("3E 02 11 00") }
    }

    @Test func reservedValuesDecodeAndSurvive() throws {
        // Role 0x07, address type 0x09 and PHY 0x09 are reserved: kept raw, not an error.
        let hex = "3E 13 01 00 40 00 07 09 66 55 44 33 22 C1 18 00 00 00 48 00 05"
        let meta = try decodeLE(hex)
        guard case .connectionComplete(let complete) = meta else { throw DecodeError.trailingBytes(count: 0) }
        #expect(complete.role.rawValue == 7)
        #expect(complete.peerAddressType.addressType == nil)
        #expect(complete.peerAddressType.description == "address type 0x09")
        #expect(HCIEvent.le(meta).encode() == Hex.bytes(hex))
        #expect(try decodeLE("3E 06 0C 00 40 00 09 03") == .phyUpdateComplete(.init(status: .success, connectionHandle: 0x40, txPHY: LEPHY(rawValue: 9), rxPHY: .leCoded)))
    }

    @Test func unknownSubeventsKeepTheirBytes() throws {
        // LE Remote Connection Parameter Request (0x06) is not modelled.
        #expect(try decodeLE("3E 0B 06 40 00 06 00 0C 00 00 00 C8 00") == .unknown(subeventCode: 0x06, parameters: [0x40, 0x00, 0x06, 0x00, 0x0C, 0x00, 0x00, 0x00, 0xC8, 0x00]))
        #expect(try decodeLE("3E 01 FF") == .unknown(subeventCode: 0xFF, parameters: []))
        #expect(HCIEvent.le(.unknown(subeventCode: 0x22, parameters: [1])).encode() == [0x3E, 0x02, 0x22, 0x01])
    }

    @Test func subeventProtocolRoundTrips() throws {
        func roundTrip<S: LEMetaSubevent>(_ value: S, code: UInt8) throws {
            #expect(S.subeventCode == code)
            var writer = ByteWriter()
            value.encode(into: &writer)
            var reader = ByteReader(writer.bytes)
            #expect(try S(decoding: &reader) == value)
            #expect(reader.isAtEnd)
        }
        let address = BluetoothAddress("C0:01:02:03:04:05")!
        try roundTrip(LEConnectionComplete(status: .success, connectionHandle: 1, role: .central, peerAddressType: .public, peerAddress: address, connectionInterval: 24, peripheralLatency: 0, supervisionTimeout: 72, centralClockAccuracy: 0), code: 0x01)
        try roundTrip(LEAdvertisingReport(reports: [.init(eventType: .advScanInd, addressType: .random, address: address, data: [1, 2], rssi: -1)]), code: 0x02)
        try roundTrip(LEConnectionUpdateComplete(status: .success, connectionHandle: 1, connectionInterval: 6, peripheralLatency: 4, supervisionTimeout: 100), code: 0x03)
        try roundTrip(LEReadRemoteFeaturesComplete(status: .success, connectionHandle: 1, leFeatures: 0xFF), code: 0x04)
        try roundTrip(LELongTermKeyRequest(connectionHandle: 1, randomNumber: 0, encryptedDiversifier: 0), code: 0x05)
        try roundTrip(LEDataLengthChange(connectionHandle: 1, maxTxOctets: 27, maxTxTime: 328, maxRxOctets: 27, maxRxTime: 328), code: 0x07)
        let enhanced = LEEnhancedConnectionComplete(version: .v1, status: .success, connectionHandle: 1, role: .central, peerAddressType: .randomIdentity, peerAddress: address, localResolvablePrivateAddress: .zero, peerResolvablePrivateAddress: .zero, connectionInterval: 24, peripheralLatency: 0, supervisionTimeout: 72, centralClockAccuracy: 1)
        try roundTrip(enhanced, code: 0x0A)
        var enhancedV2 = enhanced
        enhancedV2.version = .v2(advertisingHandle: 0, syncHandle: 0xFFFF)
        try roundTrip(enhancedV2, code: 0x0A)  // the protocol initializer tells versions apart by length
        try roundTrip(LEDirectedAdvertisingReport(reports: [.init(addressType: .public, address: address, directAddressType: .random, directAddress: address, rssi: -90)]), code: 0x0B)
        try roundTrip(LEPHYUpdateComplete(status: .success, connectionHandle: 1, txPHY: .leCoded, rxPHY: .le1M), code: 0x0C)
        try roundTrip(LEExtendedAdvertisingReport(reports: [.init(eventType: [.connectable], addressType: .anonymous, address: .zero, primaryPHY: .leCoded, secondaryPHY: .le2M, advertisingSID: 3, txPower: 4, rssi: -70, periodicAdvertisingInterval: 0, directAddressType: .unresolvedResolvablePrivate, directAddress: address, data: Array(repeating: 0xAB, count: 200))]), code: 0x0D)
        try roundTrip(LEScanTimeout(), code: 0x11)
        try roundTrip(LEAdvertisingSetTerminated(status: .limitReached, advertisingHandle: 0, connectionHandle: 0, numCompletedExtendedAdvertisingEvents: 9), code: 0x12)
        try roundTrip(LEScanRequestReceived(advertisingHandle: 0, scannerAddressType: .publicIdentity, scannerAddress: address), code: 0x13)
        try roundTrip(LEChannelSelectionAlgorithm(connectionHandle: 1, channelSelectionAlgorithm: 0), code: 0x14)
    }

    @Test func valueDescriptions() {
        #expect(ReportedAddressType.anonymous.description == "anonymous")
        #expect(ReportedAddressType.unresolvedResolvablePrivate.description == "unresolved-rpa")
        #expect(ReportedAddressType(.randomIdentity) == .randomIdentity)
        #expect(ConnectionRole.central.description == "central")
        #expect(LEPHY.leCoded.description == "LE Coded")
        #expect(LEAdvertisingReport.EventType.scanRsp.description == "SCAN_RSP")
        #expect(LEExtendedAdvertisingReport.EventType([.connectable, .legacy]).description == "connectable,legacy")
    }
}
