import BluetoothCore
import HCI
import Testing

// One or more valid values of every command in the catalogue and of every return-parameters
// type, type-erased so table-driven tests can loop over them. The fuzz loop uses their
// encodings as seeds, so variable-length layouts get inputs with plausible structure.

/// A decoder under test: bytes in, the re-encoding of what it decoded out.
struct Decoder: Sendable, CustomTestStringConvertible {
    let name: String
    let decodeAndReencode: @Sendable ([UInt8]) throws(DecodeError) -> [UInt8]
    /// Valid encodings.
    let seeds: [[UInt8]]

    var testDescription: String { name }

    static func parameters<C: HCICommand>(of type: C.Type, seeds: [[UInt8]]) -> Decoder {
        Decoder(name: "\(C.name) parameters", decodeAndReencode: { (bytes: [UInt8]) throws(DecodeError) -> [UInt8] in
            var reader = ByteReader(bytes)
            let command = try C(parameters: &reader)
            var writer = ByteWriter()
            command.encodeParameters(into: &writer)
            return writer.bytes
        }, seeds: seeds)
    }

    static func returnParameters<R: HCIReturnParameters>(of type: R.Type, name: String, seeds: [[UInt8]]) -> Decoder {
        Decoder(name: "\(name) return parameters", decodeAndReencode: { (bytes: [UInt8]) throws(DecodeError) -> [UInt8] in
            var reader = ByteReader(bytes)
            let value = try R(decoding: &reader)
            var writer = ByteWriter()
            value.encode(into: &writer)
            return writer.bytes
        }, seeds: seeds)
    }
}

/// A command value with its parameter bytes and a check that decoding gives it back.
struct CommandSample: Sendable, CustomTestStringConvertible {
    let type: any HCICommand.Type
    let packet: [UInt8]
    let parameters: [UInt8]
    let decodesToOriginal: @Sendable ([UInt8]) throws(DecodeError) -> Bool

    var testDescription: String { type.name }

    init<C: HCICommand & Equatable>(_ command: C) {
        type = C.self
        packet = command.encode()
        var writer = ByteWriter()
        command.encodeParameters(into: &writer)
        parameters = writer.bytes
        decodesToOriginal = { (bytes: [UInt8]) throws(DecodeError) -> Bool in
            var reader = ByteReader(bytes)
            return try C(parameters: &reader) == command
        }
    }
}

/// A return-parameters value with its bytes.
struct ReturnSample: Sendable, CustomTestStringConvertible {
    let name: String
    let returnType: any HCIReturnParameters.Type
    let bytes: [UInt8]
    let decodesToOriginal: @Sendable ([UInt8]) throws(DecodeError) -> Bool

    var testDescription: String { name }

    init<C: HCICommand>(_ command: C.Type, _ value: C.ReturnParameters) where C.ReturnParameters: Equatable {
        name = C.name
        returnType = C.ReturnParameters.self
        var writer = ByteWriter()
        value.encode(into: &writer)
        bytes = writer.bytes
        decodesToOriginal = { (bytes: [UInt8]) throws(DecodeError) -> Bool in
            var reader = ByteReader(bytes)
            return try C.ReturnParameters(decoding: &reader) == value
        }
    }
}

enum Samples {
    static let address = BluetoothAddress(0xC44B_4D00_0001)
    static let key = Array(UInt8(0x00)...UInt8(0x0F))
    static let otherKey = Array(UInt8(0xF0)...UInt8(0xFF))

    /// Builds a sample from a throwing initializer; the values below are all valid.
    static func valid<C: HCICommand & Equatable>(_ build: () throws(DecodeError) -> C) -> CommandSample {
        do { return CommandSample(try build()) } catch { fatalError("invalid sample \(C.name): \(error)") }
    }

    static let scan1M = LESetExtendedScanParameters.PHYParameters(scanType: .active, scanInterval: 0x0012, scanWindow: 0x0012)
    static let scanCoded = LESetExtendedScanParameters.PHYParameters(scanType: .passive, scanInterval: 0x0036, scanWindow: 0x0036)
    static let initiating = LEExtendedCreateConnection.PHYParameters(
        scanInterval: 0x0060, scanWindow: 0x0030,
        connectionParameters: .init(
            connectionIntervalMin: 0x0018, connectionIntervalMax: 0x0028, maxLatency: 0, supervisionTimeout: 0x01F4,
            minCELength: 0, maxCELength: 0x0010))

    static let commands: [CommandSample] = [
        CommandSample(Disconnect(connectionHandle: 0x0040, reason: .remoteUserTerminatedConnection)),
        CommandSample(ReadRemoteVersionInformation(connectionHandle: 0x0EFF)),
        CommandSample(Reset()),
        CommandSample(SetEventMask(mask: 0x3DBF_F807_FFFB_FFFF)),
        CommandSample(SetEventMaskPage2(mask: 0x0000_0000_0080_0000)),
        CommandSample(WriteLEHostSupported(leSupportedHost: true)),
        CommandSample(WriteLEHostSupported(leSupportedHost: false)),
        CommandSample(ReadLocalName()),
        CommandSample(ReadTransmitPowerLevel(connectionHandle: 0x0001, type: .maximum)),
        CommandSample(ReadLocalVersionInformation()),
        CommandSample(ReadLocalSupportedCommands()),
        CommandSample(ReadLocalSupportedFeatures()),
        CommandSample(ReadBufferSize()),
        CommandSample(ReadBDADDR()),
        CommandSample(ReadRSSI(connectionHandle: 0x0040)),
        CommandSample(ReadEncryptionKeySize(connectionHandle: 0x0040)),
        CommandSample(LESetEventMask(mask: 0x0000_0000_000F_FFFF)),
        CommandSample(LEReadBufferSizeV1()),
        CommandSample(LEReadBufferSizeV2()),
        CommandSample(LEReadLocalSupportedFeatures()),
        CommandSample(LEReadSupportedStates()),
        CommandSample(LEReadMaximumDataLength()),
        CommandSample(LEReadSuggestedDefaultDataLength()),
        CommandSample(LEWriteSuggestedDefaultDataLength(suggestedMaxTxOctets: 251, suggestedMaxTxTime: 2120)),
        CommandSample(LEReadTransmitPower()),
        CommandSample(LESetRandomAddress(randomAddress: address)),
        CommandSample(LESetAdvertisingParameters(advertisingIntervalMin: 0x0800, advertisingIntervalMax: 0x0800, advertisingType: .connectableUndirected, ownAddressType: .public)),
        CommandSample(LESetAdvertisingParameters(
            advertisingIntervalMin: 0x0020, advertisingIntervalMax: 0x4000, advertisingType: .connectableLowDutyCycleDirected,
            ownAddressType: .randomIdentity, peerAddressType: .random, peerAddress: address,
            advertisingChannelMap: [.channel37, .channel39], advertisingFilterPolicy: .filterScanAndConnectionRequests)),
        CommandSample(LEReadAdvertisingPhysicalChannelTxPower()),
        valid { () throws(DecodeError) in try LESetAdvertisingData(advertisingData: [0x02, 0x01, 0x06]) },
        valid { () throws(DecodeError) in try LESetAdvertisingData(advertisingData: []) },
        valid { () throws(DecodeError) in try LESetAdvertisingData(advertisingData: Array(repeating: 0xAB, count: 31)) },
        valid { () throws(DecodeError) in try LESetScanResponseData(scanResponseData: [0x05, 0x09, 0x42, 0x61, 0x72, 0x65]) },
        CommandSample(LESetAdvertisingEnable(advertisingEnable: true)),
        CommandSample(LESetAdvertisingSetRandomAddress(advertisingHandle: 1, randomAddress: address)),
        valid { () throws(DecodeError) in
            try LESetExtendedAdvertisingParameters(
                advertisingHandle: 0, advertisingEventProperties: [.connectable, .scannable, .useLegacyPDUs],
                primaryAdvertisingIntervalMin: 0xA0, primaryAdvertisingIntervalMax: 0xA0, ownAddressType: .random)
        },
        valid { () throws(DecodeError) in
            try LESetExtendedAdvertisingParameters(
                advertisingHandle: 3, advertisingEventProperties: [.connectable, .includeTxPower],
                primaryAdvertisingIntervalMin: 0xFF_FFFF, primaryAdvertisingIntervalMax: 0x12_3456,
                primaryAdvertisingChannelMap: .channel38, ownAddressType: .publicIdentity, peerAddressType: .random,
                peerAddress: address, advertisingFilterPolicy: .filterScanRequests, advertisingTxPower: -20,
                primaryAdvertisingPHY: .leCoded, secondaryAdvertisingMaxSkip: 2, secondaryAdvertisingPHY: .le2M,
                advertisingSID: 0x0F, scanRequestNotificationEnable: true)
        },
        valid { () throws(DecodeError) in
            try LESetExtendedAdvertisingData(advertisingHandle: 0, operation: .completeData, fragmentPreference: .shouldNotFragment, advertisingData: [0x02, 0x01, 0x06])
        },
        valid { () throws(DecodeError) in
            try LESetExtendedAdvertisingData(advertisingHandle: 2, operation: .intermediateFragment, advertisingData: Array(repeating: 0x5A, count: 251))
        },
        valid { () throws(DecodeError) in try LESetExtendedScanResponseData(advertisingHandle: 0, scanResponseData: []) },
        valid { () throws(DecodeError) in try LESetExtendedScanResponseData(advertisingHandle: 1, operation: .firstFragment, scanResponseData: [1, 2, 3, 4]) },
        valid { () throws(DecodeError) in try LESetExtendedAdvertisingEnable(enable: true, sets: [.init(advertisingHandle: 1)]) },
        valid { () throws(DecodeError) in try LESetExtendedAdvertisingEnable(enable: false, sets: []) },
        valid { () throws(DecodeError) in
            try LESetExtendedAdvertisingEnable(enable: true, sets: [
                .init(advertisingHandle: 0, duration: 500, maxExtendedAdvertisingEvents: 3),
                .init(advertisingHandle: 7, duration: 0xFFFF, maxExtendedAdvertisingEvents: 0xFF),
            ])
        },
        CommandSample(LEReadMaximumAdvertisingDataLength()),
        CommandSample(LEReadNumberOfSupportedAdvertisingSets()),
        CommandSample(LERemoveAdvertisingSet(advertisingHandle: 4)),
        CommandSample(LEClearAdvertisingSets()),
        CommandSample(LESetScanParameters(leScanType: .active, leScanInterval: 0x0010, leScanWindow: 0x0010, ownAddressType: .public)),
        CommandSample(LESetScanEnable(enable: true, filterDuplicates: false)),
        CommandSample(LESetScanEnable(enable: false, filterDuplicates: true)),
        CommandSample(LESetExtendedScanParameters(ownAddressType: .random, le1M: scan1M, leCoded: scanCoded)),
        CommandSample(LESetExtendedScanParameters(ownAddressType: .public, scanningFilterPolicy: .extendedFiltered, le1M: scan1M)),
        valid { () throws(DecodeError) in
            try LESetExtendedScanParameters(ownAddressType: .public, scanningPHYs: [], phyParameters: [])
        },
        CommandSample(LESetExtendedScanEnable(enable: true, filterDuplicates: .enabled, duration: 0, period: 0)),
        CommandSample(LESetExtendedScanEnable(enable: true, filterDuplicates: .enabledResetEachPeriod, duration: 100, period: 2)),
        CommandSample(LECreateConnection(
            leScanInterval: 0x0060, leScanWindow: 0x0030, peerAddressType: .random, peerAddress: address, ownAddressType: .public,
            connectionParameters: .init(connectionIntervalMin: 0x0018, connectionIntervalMax: 0x0028, maxLatency: 0, supervisionTimeout: 0x01F4))),
        CommandSample(LECreateConnectionCancel()),
        CommandSample(LEExtendedCreateConnection(ownAddressType: .public, peerAddressType: .random, peerAddress: address, le1M: initiating)),
        CommandSample(LEExtendedCreateConnection(
            initiatorFilterPolicy: .filterAcceptList, ownAddressType: .random, peerAddressType: .public, peerAddress: .zero,
            le1M: initiating, le2M: initiating, leCoded: initiating)),
        CommandSample(LEConnectionUpdate(
            connectionHandle: 0x0040,
            connectionParameters: .init(
                connectionIntervalMin: 6, connectionIntervalMax: 12, maxLatency: 4, supervisionTimeout: 100, minCELength: 1, maxCELength: 2))),
        CommandSample(LEReadRemoteFeatures(connectionHandle: 0x0040)),
        CommandSample(LESetDataLength(connectionHandle: 0x0040, txOctets: 251, txTime: 2120)),
        CommandSample(LERemoteConnectionParameterRequestReply(
            connectionHandle: 0x0040,
            connectionParameters: .init(connectionIntervalMin: 6, connectionIntervalMax: 12, maxLatency: 0, supervisionTimeout: 200))),
        CommandSample(LERemoteConnectionParameterRequestNegativeReply(connectionHandle: 0x0040)),
        CommandSample(LEReadPHY(connectionHandle: 0x0040)),
        CommandSample(LESetDefaultPHY(txPHYs: [.le1M, .le2M], rxPHYs: [.le1M, .le2M, .leCoded])),
        CommandSample(LESetPHY(connectionHandle: 0x0040, txPHYs: .le2M, rxPHYs: .le2M)),
        CommandSample(LESetPHY(connectionHandle: 0x0041, allPHYs: [.noReceiverPreference], txPHYs: .leCoded, rxPHYs: [], phyOptions: .preferS8)),
        valid { () throws(DecodeError) in try LEEncrypt(key: key, plaintextData: otherKey) },
        CommandSample(LERand()),
        valid { () throws(DecodeError) in
            try LEEnableEncryption(connectionHandle: 0x0040, randomNumber: 0x0102_0304_0506_0708, encryptedDiversifier: 0x1234, longTermKey: key)
        },
        valid { () throws(DecodeError) in try LELongTermKeyRequestReply(connectionHandle: 0x0040, longTermKey: otherKey) },
        CommandSample(LELongTermKeyRequestNegativeReply(connectionHandle: 0x0040)),
        CommandSample(LEReadFilterAcceptListSize()),
        CommandSample(LEClearFilterAcceptList()),
        CommandSample(LEAddDeviceToFilterAcceptList(addressType: .public, address: address)),
        CommandSample(LEAddDeviceToFilterAcceptList(addressType: .anonymousAdvertisements, address: .zero)),
        CommandSample(LERemoveDeviceFromFilterAcceptList(addressType: .random, address: address)),
        valid { () throws(DecodeError) in
            try LEAddDeviceToResolvingList(peerIdentityAddressType: .random, peerIdentityAddress: address, peerIRK: key, localIRK: otherKey)
        },
        CommandSample(LERemoveDeviceFromResolvingList(peerIdentityAddressType: .public, peerIdentityAddress: address)),
        CommandSample(LEClearResolvingList()),
        CommandSample(LEReadResolvingListSize()),
        CommandSample(LESetAddressResolutionEnable(addressResolutionEnable: true)),
        CommandSample(LESetResolvablePrivateAddressTimeout(rpaTimeout: 900)),
        CommandSample(LESetPrivacyMode(peerIdentityAddressType: .public, peerIdentityAddress: address, privacyMode: .device)),
    ]

    static func validReturn<C: HCICommand>(_ command: C.Type, _ build: () throws(DecodeError) -> C.ReturnParameters) -> ReturnSample where C.ReturnParameters: Equatable {
        do { return ReturnSample(command, try build()) } catch { fatalError("invalid sample \(C.name): \(error)") }
    }

    static let localName: [UInt8] = Array("BareBLE".utf8) + Array(repeating: 0, count: 248 - 7)
    static let supportedCommands = SupportedCommands(commands: HCICommands.all)

    static let returns: [ReturnSample] = [
        ReturnSample(Reset.self, NoReturnParameters()),
        validReturn(ReadLocalName.self) { () throws(DecodeError) in try .init(localName: localName) },
        ReturnSample(ReadTransmitPowerLevel.self, .init(connectionHandle: 0x0040, txPowerLevel: -4)),
        ReturnSample(ReadLocalVersionInformation.self, .init(hciVersion: 0x0D, hciSubversion: 0x1234, lmpVersion: 0x0D, manufacturer: 0x004C, lmpSubversion: 0x5678)),
        ReturnSample(ReadLocalSupportedCommands.self, .init(commands: supportedCommands)),
        ReturnSample(ReadLocalSupportedFeatures.self, .init(features: [.leSupportedController, .brEdrNotSupported])),
        ReturnSample(ReadBufferSize.self, .init(aclDataPacketLength: 1021, synchronousDataPacketLength: 64, totalACLDataPackets: 8, totalSynchronousDataPackets: 0)),
        ReturnSample(ReadBDADDR.self, .init(address: address)),
        ReturnSample(ReadRSSI.self, .init(connectionHandle: 0x0040, rssi: -60)),
        ReturnSample(ReadEncryptionKeySize.self, .init(connectionHandle: 0x0040, keySize: 16)),
        ReturnSample(LEReadBufferSizeV1.self, .init(leACLDataPacketLength: 251, totalLEACLDataPackets: 15)),
        ReturnSample(LEReadBufferSizeV2.self, .init(leACLDataPacketLength: 251, totalLEACLDataPackets: 15, isoDataPacketLength: 100, totalISODataPackets: 8)),
        ReturnSample(LEReadLocalSupportedFeatures.self, .init(features: [.leEncryption, .le2MPHY, .leExtendedAdvertising])),
        ReturnSample(LEReadSupportedStates.self, .init(states: 0x0000_03FF_FFFF_FFFF)),
        ReturnSample(LEReadMaximumDataLength.self, .init(supportedMaxTxOctets: 251, supportedMaxTxTime: 17040, supportedMaxRxOctets: 251, supportedMaxRxTime: 17040)),
        ReturnSample(LEReadSuggestedDefaultDataLength.self, .init(suggestedMaxTxOctets: 27, suggestedMaxTxTime: 328)),
        ReturnSample(LEReadTransmitPower.self, .init(minTxPower: -20, maxTxPower: 10)),
        ReturnSample(LEReadAdvertisingPhysicalChannelTxPower.self, .init(txPowerLevel: 0)),
        ReturnSample(LESetExtendedAdvertisingParameters.self, .init(selectedTxPower: 7)),
        ReturnSample(LEReadMaximumAdvertisingDataLength.self, .init(maximumAdvertisingDataLength: 1650)),
        ReturnSample(LEReadNumberOfSupportedAdvertisingSets.self, .init(numberOfSupportedAdvertisingSets: 16)),
        ReturnSample(LESetDataLength.self, .init(connectionHandle: 0x0040)),
        ReturnSample(LEReadPHY.self, .init(connectionHandle: 0x0040, txPHY: .le2M, rxPHY: .leCoded)),
        validReturn(LEEncrypt.self) { () throws(DecodeError) in try .init(encryptedData: otherKey) },
        ReturnSample(LERand.self, .init(randomNumber: 0xDEAD_BEEF_0BAD_F00D)),
        ReturnSample(LEReadFilterAcceptListSize.self, .init(filterAcceptListSize: 12)),
        ReturnSample(LEReadResolvingListSize.self, .init(resolvingListSize: 8)),
    ]
}
