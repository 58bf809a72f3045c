import BluetoothCore
import HCI
import Testing

// Byte sequences written by hand from the parameter tables of Core Vol 4 Part E 7.x, one or
// more per command group, so the encoders are checked against the specification and not
// only against their own decoders.

private func bytes(_ text: String) -> [UInt8] { Hex.bytes(text)! }

private func decode<C: HCICommand>(_: C.Type, packet: [UInt8]) throws -> C {
    var reader = ByteReader(Array(packet.dropFirst(3)))
    #expect(UInt16(packet[0]) | UInt16(packet[1]) << 8 == C.opcode.rawValue)
    #expect(Int(packet[2]) == packet.count - 3)
    return try C(parameters: &reader)
}

private func decodeReturn<R: HCIReturnParameters>(_: R.Type, _ bytes: [UInt8]) throws -> R {
    var reader = ByteReader(bytes)
    return try R(decoding: &reader)
}

private func encoded<R: HCIReturnParameters>(_ value: R) -> [UInt8] {
    var writer = ByteWriter()
    value.encode(into: &writer)
    return writer.bytes
}

@Suite struct CommandKnownBytesTests {
    static let address = BluetoothAddress(0xC44B_4D00_0001)

    @Test func controllerAndBaseband() throws {
        #expect(Reset().encode() == bytes("03 0C 00"))
        let mask = SetEventMask(mask: 0x3DBF_F807_FFFB_FFFF)
        #expect(mask.encode() == bytes("01 0C 08 FF FF FB FF 07 F8 BF 3D"))
        #expect(try decode(SetEventMask.self, packet: mask.encode()) == mask)
        #expect(SetEventMaskPage2(mask: 1 << 23).encode() == bytes("63 0C 08 00 00 80 00 00 00 00 00"))
        #expect(WriteLEHostSupported(leSupportedHost: true).encode() == bytes("6D 0C 02 01 00"))
        #expect(ReadTransmitPowerLevel(connectionHandle: 0x0040, type: .current).encode() == bytes("2D 0C 03 40 00 00"))

        var name = Array("hci0".utf8)
        name += Array(repeating: 0, count: 248 - name.count)
        let local = try decodeReturn(ReadLocalName.ReturnParameters.self, name)
        #expect(local.name == "hci0")
    }

    @Test func informational() throws {
        #expect(ReadLocalVersionInformation().encode() == bytes("01 10 00"))
        let version = try decodeReturn(ReadLocalVersionInformation.ReturnParameters.self, bytes("0D 34 12 0D 4C 00 78 56"))
        #expect(version == .init(hciVersion: 0x0D, hciSubversion: 0x1234, lmpVersion: 0x0D, manufacturer: 0x004C, lmpSubversion: 0x5678))
        #expect(HCIVersion.name(for: version.hciVersion) == "5.4")
        #expect(CompanyIdentifiers.name(for: version.manufacturer) == "Apple, Inc.")

        #expect(ReadLocalSupportedCommands().encode() == bytes("02 10 00"))
        #expect(ReadLocalSupportedFeatures().encode() == bytes("03 10 00"))
        // An LE-only controller: BR/EDR Not Supported (37) and LE Supported (38).
        let features = try decodeReturn(ReadLocalSupportedFeatures.ReturnParameters.self, bytes("00 00 00 00 60 00 00 00"))
        #expect(features.features == [.brEdrNotSupported, .leSupportedController])

        #expect(ReadBufferSize().encode() == bytes("05 10 00"))
        let buffers = try decodeReturn(ReadBufferSize.ReturnParameters.self, bytes("FD 03 40 08 00 00 00"))
        #expect(buffers == .init(aclDataPacketLength: 1021, synchronousDataPacketLength: 64, totalACLDataPackets: 8, totalSynchronousDataPackets: 0))

        #expect(ReadBDADDR().encode() == bytes("09 10 00"))
        let address = try decodeReturn(ReadBDADDR.ReturnParameters.self, bytes("01 00 00 4D 4B C4"))
        #expect(address.address.description == "C4:4B:4D:00:00:01")

        #expect(ReadRSSI(connectionHandle: 0x0040).encode() == bytes("05 14 02 40 00"))
        #expect(ReadEncryptionKeySize(connectionHandle: 0x0040).encode() == bytes("08 14 02 40 00"))
        let rssi = try decodeReturn(ReadRSSI.ReturnParameters.self, bytes("40 00 C4"))
        #expect(rssi == .init(connectionHandle: 0x0040, rssi: -60))
    }

    @Test func linkControl() throws {
        let disconnect = Disconnect(connectionHandle: 0x0040, reason: .remoteUserTerminatedConnection)
        #expect(disconnect.encode() == bytes("06 04 03 40 00 13"))
        #expect(try decode(Disconnect.self, packet: disconnect.encode()) == disconnect)
        #expect(ReadRemoteVersionInformation(connectionHandle: 0x0001).encode() == bytes("1D 04 02 01 00"))
    }

    @Test func leControllerInformation() throws {
        #expect(LESetEventMask(mask: 0x1F).encode() == bytes("01 20 08 1F 00 00 00 00 00 00 00"))
        #expect(LEReadBufferSizeV1().encode() == bytes("02 20 00"))
        #expect(try decodeReturn(LEReadBufferSizeV1.ReturnParameters.self, bytes("1B 00 08")) == .init(leACLDataPacketLength: 27, totalLEACLDataPackets: 8))
        #expect(LEReadBufferSizeV2().encode() == bytes("60 20 00"))
        let v2 = try decodeReturn(LEReadBufferSizeV2.ReturnParameters.self, bytes("FB 00 0F 64 00 08"))
        #expect(v2 == .init(leACLDataPacketLength: 251, totalLEACLDataPackets: 15, isoDataPacketLength: 100, totalISODataPackets: 8))
        let le = try decodeReturn(LEReadLocalSupportedFeatures.ReturnParameters.self, bytes("01 19 00 00 00 00 00 00"))
        #expect(le.features == [.leEncryption, .le2MPHY, .leCodedPHY, .leExtendedAdvertising])
        let maximum = try decodeReturn(LEReadMaximumDataLength.ReturnParameters.self, bytes("FB 00 90 42 FB 00 90 42"))
        #expect(maximum == .init(supportedMaxTxOctets: 251, supportedMaxTxTime: 17040, supportedMaxRxOctets: 251, supportedMaxRxTime: 17040))
        #expect(LEWriteSuggestedDefaultDataLength(suggestedMaxTxOctets: 251, suggestedMaxTxTime: 2120).encode() == bytes("24 20 04 FB 00 48 08"))
        #expect(try decodeReturn(LEReadTransmitPower.ReturnParameters.self, bytes("EC 0A")) == .init(minTxPower: -20, maxTxPower: 10))
    }

    @Test func legacyAdvertising() throws {
        #expect(LESetRandomAddress(randomAddress: Self.address).encode() == bytes("05 20 06 01 00 00 4D 4B C4"))
        let parameters = LESetAdvertisingParameters(
            advertisingIntervalMin: 0x0800, advertisingIntervalMax: 0x0800, advertisingType: .connectableUndirected, ownAddressType: .public)
        #expect(parameters.encode() == bytes("06 20 0F 00 08 00 08 00 00 00 00 00 00 00 00 00 07 00"))
        let data = try LESetAdvertisingData(advertisingData: [0x02, 0x01, 0x06])
        #expect(data.encode() == bytes("08 20 20 03 02 01 06") + Array(repeating: 0, count: 28))
        #expect(try decode(LESetAdvertisingData.self, packet: data.encode()) == data)
        #expect(try LESetScanResponseData(scanResponseData: []).encode() == bytes("09 20 20 00") + Array(repeating: 0, count: 31))
        #expect(LESetAdvertisingEnable(advertisingEnable: true).encode() == bytes("0A 20 01 01"))
    }

    @Test func extendedAdvertising() throws {
        let parameters = try LESetExtendedAdvertisingParameters(
            advertisingHandle: 0, advertisingEventProperties: [.connectable, .scannable, .useLegacyPDUs],
            primaryAdvertisingIntervalMin: 0xA0, primaryAdvertisingIntervalMax: 0xA0, ownAddressType: .random)
        #expect(parameters.encode() == bytes("36 20 19 00 13 00 A0 00 00 A0 00 00 07 01 00 00 00 00 00 00 00 00 7F 01 00 01 00 00"))
        #expect(try decode(LESetExtendedAdvertisingParameters.self, packet: parameters.encode()) == parameters)
        #expect(try decodeReturn(LESetExtendedAdvertisingParameters.ReturnParameters.self, bytes("F8")).selectedTxPower == -8)

        let data = try LESetExtendedAdvertisingData(advertisingHandle: 0, operation: .completeData, fragmentPreference: .shouldNotFragment, advertisingData: [0x02, 0x01, 0x06])
        #expect(data.encode() == bytes("37 20 07 00 03 01 03 02 01 06"))
        let enable = try LESetExtendedAdvertisingEnable(enable: true, sets: [.init(advertisingHandle: 1, duration: 0x0102, maxExtendedAdvertisingEvents: 3)])
        #expect(enable.encode() == bytes("39 20 06 01 01 01 02 01 03"))
        #expect(LESetAdvertisingSetRandomAddress(advertisingHandle: 2, randomAddress: Self.address).encode() == bytes("35 20 07 02 01 00 00 4D 4B C4"))
        #expect(LERemoveAdvertisingSet(advertisingHandle: 2).encode() == bytes("3C 20 01 02"))
        #expect(LEClearAdvertisingSets().encode() == bytes("3D 20 00"))
        #expect(try decodeReturn(LEReadMaximumAdvertisingDataLength.ReturnParameters.self, bytes("72 06")).maximumAdvertisingDataLength == 1650)
        #expect(try decodeReturn(LEReadNumberOfSupportedAdvertisingSets.ReturnParameters.self, bytes("10")).numberOfSupportedAdvertisingSets == 16)
    }

    @Test func scanning() throws {
        #expect(LESetScanEnable(enable: true, filterDuplicates: false).encode() == bytes("0C 20 02 01 00"))
        #expect(LESetScanParameters(leScanType: .active, leScanInterval: 0x10, leScanWindow: 0x10, ownAddressType: .public).encode() == bytes("0B 20 07 01 10 00 10 00 00 00"))
        let extended = LESetExtendedScanParameters(
            ownAddressType: .random,
            le1M: .init(scanType: .active, scanInterval: 0x12, scanWindow: 0x12),
            leCoded: .init(scanType: .passive, scanInterval: 0x36, scanWindow: 0x36))
        #expect(extended.scanningPHYs == [.le1M, .leCoded])
        #expect(extended.encode() == bytes("41 20 0D 01 00 05 01 12 00 12 00 00 36 00 36 00"))
        #expect(try decode(LESetExtendedScanParameters.self, packet: extended.encode()) == extended)
        #expect(LESetExtendedScanEnable(enable: true, filterDuplicates: true, duration: 0, period: 0).encode() == bytes("42 20 06 01 01 00 00 00 00"))
        #expect(LESetExtendedScanEnable(enable: true, filterDuplicates: .enabledResetEachPeriod, duration: 0x0064, period: 0x0002).encode() == bytes("42 20 06 01 02 64 00 02 00"))
    }

    @Test func connections() throws {
        let create = LECreateConnection(
            leScanInterval: 0x60, leScanWindow: 0x30, peerAddressType: .random, peerAddress: Self.address, ownAddressType: .public,
            connectionParameters: .init(connectionIntervalMin: 0x18, connectionIntervalMax: 0x28, maxLatency: 0, supervisionTimeout: 0x01F4))
        #expect(create.encode() == bytes("0D 20 19 60 00 30 00 00 01 01 00 00 4D 4B C4 00 18 00 28 00 00 00 F4 01 00 00 00 00"))
        #expect(LECreateConnectionCancel().encode() == bytes("0E 20 00"))
        let extended = LEExtendedCreateConnection(
            ownAddressType: .public, peerAddressType: .random, peerAddress: Self.address,
            le1M: .init(
                scanInterval: 0x60, scanWindow: 0x30,
                connectionParameters: .init(connectionIntervalMin: 0x18, connectionIntervalMax: 0x28, maxLatency: 0, supervisionTimeout: 0x01F4)))
        #expect(extended.encode() == bytes("43 20 1A 00 00 01 01 00 00 4D 4B C4 01 60 00 30 00 18 00 28 00 00 00 F4 01 00 00 00 00"))
        #expect(try decode(LEExtendedCreateConnection.self, packet: extended.encode()) == extended)
        let update = LEConnectionUpdate(
            connectionHandle: 0x40,
            connectionParameters: .init(connectionIntervalMin: 6, connectionIntervalMax: 12, maxLatency: 4, supervisionTimeout: 100))
        #expect(update.encode() == bytes("13 20 0E 40 00 06 00 0C 00 04 00 64 00 00 00 00 00"))
        #expect(LEReadRemoteFeatures(connectionHandle: 0x40).encode() == bytes("16 20 02 40 00"))
        #expect(LESetDataLength(connectionHandle: 0x40, txOctets: 251, txTime: 2120).encode() == bytes("22 20 06 40 00 FB 00 48 08"))
        #expect(try decodeReturn(LESetDataLength.ReturnParameters.self, bytes("40 00")).connectionHandle == 0x40)
        let reply = LERemoteConnectionParameterRequestReply(
            connectionHandle: 0x40,
            connectionParameters: .init(connectionIntervalMin: 6, connectionIntervalMax: 12, maxLatency: 0, supervisionTimeout: 200))
        #expect(reply.encode() == bytes("20 20 0E 40 00 06 00 0C 00 00 00 C8 00 00 00 00 00"))
        #expect(LERemoteConnectionParameterRequestNegativeReply(connectionHandle: 0x40).encode() == bytes("21 20 03 40 00 3B"))
    }

    @Test func connectionParametersInMilliseconds() {
        let widest = LEConnectionParameters(
            connectionIntervalMin: 0x0006, connectionIntervalMax: 0x0C80, maxLatency: 0, supervisionTimeout: 0x0C80,
            minCELength: 2, maxCELength: 16)
        #expect(widest.connectionIntervalMinMilliseconds == 7.5)
        #expect(widest.connectionIntervalMaxMilliseconds == 4000)
        #expect(widest.supervisionTimeoutMilliseconds == 32000)
        #expect(widest.minCELengthMilliseconds == 1.25)
        #expect(widest.maxCELengthMilliseconds == 10)
    }

    @Test func phy() throws {
        #expect(LEReadPHY(connectionHandle: 0x40).encode() == bytes("30 20 02 40 00"))
        let read = try decodeReturn(LEReadPHY.ReturnParameters.self, bytes("40 00 02 03"))
        #expect(read == .init(connectionHandle: 0x40, txPHY: .le2M, rxPHY: .leCoded))
        #expect(read.rxPHY.description == "LE Coded")
        #expect(LESetDefaultPHY(allPHYs: [.noReceiverPreference], txPHYs: [.le1M, .le2M], rxPHYs: []).encode() == bytes("31 20 03 02 03 00"))
        #expect(LESetPHY(connectionHandle: 0x40, txPHYs: .le2M, rxPHYs: .le2M).encode() == bytes("32 20 07 40 00 00 02 02 00 00"))
    }

    @Test func security() throws {
        let key = Array(UInt8(0x00)...UInt8(0x0F))
        let encrypt = try LEEncrypt(key: key, plaintextData: key.reversed())
        #expect(encrypt.encode() == bytes("17 20 20 000102030405060708090A0B0C0D0E0F 0F0E0D0C0B0A09080706050403020100"))
        #expect(LERand().encode() == bytes("18 20 00"))
        #expect(try decodeReturn(LERand.ReturnParameters.self, bytes("0D F0 AD 0B EF BE AD DE")).randomNumber == 0xDEAD_BEEF_0BAD_F00D)
        let enable = try LEEnableEncryption(connectionHandle: 0x40, randomNumber: 0x0102_0304_0506_0708, encryptedDiversifier: 0x1234, longTermKey: key)
        #expect(enable.encode() == bytes("19 20 1C 40 00 08 07 06 05 04 03 02 01 34 12 000102030405060708090A0B0C0D0E0F"))
        #expect(try LELongTermKeyRequestReply(connectionHandle: 0x40, longTermKey: key).encode() == bytes("1A 20 12 40 00 000102030405060708090A0B0C0D0E0F"))
        #expect(LELongTermKeyRequestNegativeReply(connectionHandle: 0x40).encode() == bytes("1B 20 02 40 00"))
        #expect(try decodeReturn(LELongTermKeyRequestNegativeReply.ReturnParameters.self, bytes("40 00")).connectionHandle == 0x40)
    }

    @Test func privacyAndLists() throws {
        #expect(LEAddDeviceToFilterAcceptList(addressType: .public, address: Self.address).encode() == bytes("11 20 07 00 01 00 00 4D 4B C4"))
        #expect(LEAddDeviceToFilterAcceptList(addressType: .anonymousAdvertisements, address: .zero).encode() == bytes("11 20 07 FF 00 00 00 00 00 00"))
        #expect(LERemoveDeviceFromFilterAcceptList(addressType: .random, address: Self.address).encode() == bytes("12 20 07 01 01 00 00 4D 4B C4"))
        #expect(LEClearFilterAcceptList().encode() == bytes("10 20 00"))
        #expect(try decodeReturn(LEReadFilterAcceptListSize.ReturnParameters.self, bytes("0C")).filterAcceptListSize == 12)
        let key = Array(repeating: UInt8(0x11), count: 16)
        let add = try LEAddDeviceToResolvingList(peerIdentityAddressType: .public, peerIdentityAddress: Self.address, peerIRK: key, localIRK: key)
        #expect(add.encode() == bytes("27 20 27 00 01 00 00 4D 4B C4") + key + key)
        #expect(LEClearResolvingList().encode() == bytes("29 20 00"))
        #expect(LESetAddressResolutionEnable(addressResolutionEnable: true).encode() == bytes("2D 20 01 01"))
        #expect(LESetResolvablePrivateAddressTimeout(rpaTimeout: 900).encode() == bytes("2E 20 02 84 03"))
        #expect(LESetPrivacyMode(peerIdentityAddressType: .random, peerIdentityAddress: Self.address, privacyMode: .device).encode() == bytes("4E 20 08 01 01 00 00 4D 4B C4 01"))
    }

    @Test func emptyReturnParameters() throws {
        _ = try decodeReturn(NoReturnParameters.self, [])
        #expect(throws: DecodeError.trailingBytes(count: 1)) { try decodeReturn(NoReturnParameters.self, [0x00]) }
        #expect(encoded(NoReturnParameters()) == [])
    }
}
