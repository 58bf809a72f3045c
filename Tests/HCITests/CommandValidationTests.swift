import BluetoothCore
import HCI
import Testing

// Values the wire cannot carry cannot be built, and bytes the specification does not allow
// do not decode (always as a typed error).

private func parameters<C: HCICommand>(_: C.Type, _ bytes: [UInt8]) throws(DecodeError) -> C {
    var reader = ByteReader(bytes)
    return try C(parameters: &reader)
}

@Suite struct CommandValidationTests {
    @Test func fixedSizeKeysAreChecked() {
        #expect(throws: DecodeError.lengthMismatch(declared: 16, actual: 15)) {
            try LEEncrypt(key: Array(repeating: 0, count: 15), plaintextData: Array(repeating: 0, count: 16))
        }
        #expect(throws: DecodeError.lengthMismatch(declared: 16, actual: 17)) {
            try LEEncrypt(key: Array(repeating: 0, count: 16), plaintextData: Array(repeating: 0, count: 17))
        }
        #expect(throws: DecodeError.lengthMismatch(declared: 16, actual: 0)) {
            try LEEnableEncryption(connectionHandle: 1, randomNumber: 0, encryptedDiversifier: 0, longTermKey: [])
        }
        #expect(throws: DecodeError.self) { try LELongTermKeyRequestReply(connectionHandle: 1, longTermKey: [1, 2, 3]) }
        #expect(throws: DecodeError.self) {
            try LEAddDeviceToResolvingList(peerIdentityAddressType: .public, peerIdentityAddress: .zero, peerIRK: [], localIRK: Array(repeating: 0, count: 16))
        }
        #expect(throws: DecodeError.self) { try LEEncrypt.ReturnParameters(encryptedData: [0]) }
        #expect(throws: DecodeError.self) { try ReadLocalName.ReturnParameters(localName: Array("short".utf8)) }
    }

    @Test func advertisingDataLimits() throws {
        #expect(throws: DecodeError.invalidValue(field: "Advertising_Data_Length", value: 32)) {
            try LESetAdvertisingData(advertisingData: Array(repeating: 0, count: 32))
        }
        #expect(throws: DecodeError.self) { try LESetScanResponseData(scanResponseData: Array(repeating: 0, count: 40)) }
        #expect(throws: DecodeError.invalidValue(field: "Advertising_Data_Length", value: 252)) {
            try LESetExtendedAdvertisingData(advertisingHandle: 0, advertisingData: Array(repeating: 0, count: 252))
        }
        #expect(throws: DecodeError.self) { try LESetExtendedScanResponseData(advertisingHandle: 0, scanResponseData: Array(repeating: 0, count: 300)) }

        // Length octet above 31, and non-zero padding after the significant part.
        #expect(throws: DecodeError.invalidValue(field: "Advertising_Data_Length", value: 32)) {
            try parameters(LESetAdvertisingData.self, [32] + Array(repeating: 0, count: 31))
        }
        var padded = [UInt8(2), 0x01, 0x06] + Array(repeating: UInt8(0), count: 29)
        padded[20] = 0x7F
        #expect(throws: DecodeError.invalidValue(field: "Advertising_Data padding", value: 0x7F)) {
            try parameters(LESetAdvertisingData.self, padded)
        }
        #expect(throws: DecodeError.invalidValue(field: "Scan_Response_Data_Length", value: 252)) {
            try parameters(LESetExtendedScanResponseData.self, [0, 3, 0, 252] + Array(repeating: 0, count: 252))
        }
        // A length octet longer than what follows is truncation, not a crash.
        #expect(throws: DecodeError.truncated(needed: 10, available: 2)) {
            try parameters(LESetExtendedAdvertisingData.self, [0, 3, 0, 10, 1, 2])
        }
    }

    @Test func intervalsMustFitThreeOctets() {
        #expect(throws: DecodeError.invalidValue(field: "Primary_Advertising_Interval_Max", value: 0x100_0000)) {
            try LESetExtendedAdvertisingParameters(
                advertisingHandle: 0, advertisingEventProperties: [], primaryAdvertisingIntervalMin: 0x20,
                primaryAdvertisingIntervalMax: 0x100_0000, ownAddressType: .public)
        }
    }

    @Test func perPHYArraysFollowTheMask() throws {
        let entry = LESetExtendedScanParameters.PHYParameters(scanType: .active, scanInterval: 16, scanWindow: 16)
        #expect(throws: DecodeError.lengthMismatch(declared: 2, actual: 1)) {
            try LESetExtendedScanParameters(ownAddressType: .public, scanningPHYs: [.le1M, .leCoded], phyParameters: [entry])
        }
        #expect(throws: DecodeError.lengthMismatch(declared: 0, actual: 1)) {
            try LESetExtendedScanParameters(ownAddressType: .public, scanningPHYs: [], phyParameters: [entry])
        }
        // The mask announces two entries; only one follows.
        #expect(throws: DecodeError.truncated(needed: 1, available: 0)) {
            try parameters(LESetExtendedScanParameters.self, [0x00, 0x00, 0x05, 0x01, 0x10, 0x00, 0x10, 0x00])
        }
        // A reserved PHY bit still counts as an entry, so the command decodes faithfully.
        let reserved = try parameters(LESetExtendedScanParameters.self, [0x00, 0x00, 0x80, 0x01, 0x10, 0x00, 0x10, 0x00])
        #expect(reserved.scanningPHYs.rawValue == 0x80)
        #expect(reserved.phyParameters == [entry])

        let initiating = LEExtendedCreateConnection.PHYParameters(
            scanInterval: 1, scanWindow: 1,
            connectionParameters: .init(connectionIntervalMin: 6, connectionIntervalMax: 6, maxLatency: 0, supervisionTimeout: 10))
        #expect(throws: DecodeError.lengthMismatch(declared: 3, actual: 2)) {
            try LEExtendedCreateConnection(
                ownAddressType: .public, peerAddressType: .public, peerAddress: .zero,
                initiatingPHYs: [.le1M, .le2M, .leCoded], phyParameters: [initiating, initiating])
        }
    }

    @Test func tooManyAdvertisingSets() {
        let sets = (0..<256).map { LESetExtendedAdvertisingEnable.AdvertisingSet(advertisingHandle: UInt8(truncatingIfNeeded: $0)) }
        #expect(throws: DecodeError.invalidValue(field: "Num_Sets", value: 256)) {
            try LESetExtendedAdvertisingEnable(enable: true, sets: sets)
        }
        // Num_Sets larger than the sets present: truncated.
        #expect(throws: DecodeError.self) { try parameters(LESetExtendedAdvertisingEnable.self, [0x01, 0x02, 0x01, 0x00, 0x00, 0x00]) }
    }

    @Test func reservedOctetValuesThatCannotRoundTrip() {
        #expect(throws: DecodeError.invalidValue(field: "LE_Scan_Enable", value: 2)) { try parameters(LESetScanEnable.self, [0x02, 0x00]) }
        #expect(throws: DecodeError.invalidValue(field: "Filter_Duplicates", value: 0xFF)) { try parameters(LESetScanEnable.self, [0x01, 0xFF]) }
        #expect(throws: DecodeError.invalidValue(field: "Simultaneous_LE_Host", value: 1)) { try parameters(WriteLEHostSupported.self, [0x01, 0x01]) }
        #expect(throws: DecodeError.invalidValue(field: "Own_Address_Type", value: 4)) {
            try parameters(LESetScanParameters.self, [0x00, 0x10, 0x00, 0x10, 0x00, 0x04, 0x00])
        }
    }

    @Test func reservedValuesOfOpenSetsAreKept() throws {
        // Advertising_Type 0x05 and Scan_Type 0x02 are reserved for future use: they decode
        // (a newer host may send them) and re-encode unchanged.
        let advertising = try parameters(LESetAdvertisingParameters.self, [0x00, 0x08, 0x00, 0x08, 0x05, 0x00, 0x00, 0, 0, 0, 0, 0, 0, 0x07, 0x00])
        #expect(advertising.advertisingType.rawValue == 0x05)
        #expect(advertising.advertisingType.description == "reserved advertising type 0x05")
        let scan = try parameters(LESetScanParameters.self, [0x02, 0x10, 0x00, 0x10, 0x00, 0x00, 0x00])
        #expect(scan.leScanType.description == "reserved scan type 0x02")
        #expect(LEPHY(rawValue: 9).description == "reserved PHY 0x09")
    }
}
