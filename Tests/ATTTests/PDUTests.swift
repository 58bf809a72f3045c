@testable import ATT
import BluetoothCore
import Testing

@Suite struct PDUTests {
    @Test(arguments: PDUSamples.all)
    func decodesHandWrittenBytes(_ sample: PDUSample) throws {
        let decoded = try ATTPDU(decoding: sample.bytes)
        #expect(decoded == sample.value)
        #expect(decoded.opcode.rawValue == sample.bytes[0])
    }

    @Test(arguments: PDUSamples.all)
    func encodesToTheSameBytes(_ sample: PDUSample) {
        #expect(Hex.string(sample.value.encode(), separator: " ") == Hex.string(sample.bytes, separator: " "))
    }

    /// Prefixes shorter than the fixed fields are errors; longer ones either fail with a
    /// typed error or (for value and list tails) decode to something that re-encodes exactly.
    @Test(arguments: PDUSamples.all)
    func everyPrefixIsAnErrorOrExact(_ sample: PDUSample) {
        let bytes = sample.bytes
        for length in 0..<bytes.count {
            let prefix = Array(bytes.prefix(length))
            do {
                let decoded = try ATTPDU(decoding: prefix)
                #expect(length >= sample.fixedLength, "\(sample): \(length)-byte prefix decoded")
                #expect(decoded.encode() == prefix, "\(sample): \(length)-byte prefix")
            } catch {
                // Typed: `ATTPDU(decoding:)` throws only DecodeError.
            }
        }
    }

    @Test(arguments: PDUSamples.all.filter(\.isFixedSize))
    func fixedSizePDUsRejectAnExtraByte(_ sample: PDUSample) {
        #expect(throws: DecodeError.self) { try ATTPDU(decoding: sample.bytes + [0x00]) }
    }

    @Test(arguments: MalformedPDUs.all.map(\.hex))
    func malformedShapesAreTypedErrors(_ hex: String) {
        let bytes = Hex.bytes(hex)!
        #expect(throws: DecodeError.self, "\(MalformedPDUs.all.first { $0.hex == hex }!.why)") {
            try ATTPDU(decoding: bytes)
        }
    }

    @Test func specificErrorsForListShapes() {
        #expect(throws: DecodeError.invalidValue(field: "Find Information Response Format", value: 3)) {
            try ATTPDU(decoding: Hex.bytes("05 03 01 00 00 28")!)
        }
        #expect(throws: DecodeError.trailingBytes(count: 1)) {
            try ATTPDU(decoding: Hex.bytes("09 07 02 00 10 03 00 0D 2A 05")!)
        }
        #expect(throws: DecodeError.invalidValue(field: "Read By Type Response Length", value: 0)) {
            try ATTPDU(decoding: Hex.bytes("09 00")!)
        }
        #expect(throws: DecodeError.lengthMismatch(declared: 5, actual: 1)) {
            try ATTPDU(decoding: Hex.bytes("23 03 00 05 00 01")!)
        }
    }

    @Test func uuidWidthSurvivesTheRoundTrip() throws {
        // 0x2800 sent in its 128-bit form equals the 16-bit UUID but must re-encode long.
        let long = try ReadByGroupTypeRequest(decodingPDU: Hex.bytes("10 01 00 FF FF FB 34 9B 5F 80 00 00 80 00 10 00 00 00 28 00 00")!)
        let short = ReadByGroupTypeRequest(startingHandle: 1, endingHandle: 0xFFFF, attributeGroupType: BluetoothUUID(UInt16(0x2800)))
        #expect(long.attributeGroupType == short.attributeGroupType)
        #expect(long.attributeGroupTypeWidth == .bits128)
        #expect(short.attributeGroupTypeWidth == .bits16)
        #expect(long.encode().count == 21)
        #expect(short.encode() == Hex.bytes("10 01 00 FF FF 00 28"))
        // A 32-bit UUID has no ATT form of its own: it goes as 128 bits.
        let thirtyTwo = ReadByTypeRequest(startingHandle: 1, endingHandle: 2, attributeType: BluetoothUUID(UInt32(0x1234_5678)))
        #expect(thirtyTwo.attributeTypeWidth == .bits128)
        #expect(try ReadByTypeRequest(decodingPDU: thirtyTwo.encode()) == thirtyTwo)
    }

    @Test func builtValuesThatCannotEncodeAreRejected() {
        #expect(throws: DecodeError.self) { try ReadByTypeResponse(attributeDataList: []) }
        #expect(throws: DecodeError.self) {
            try ReadByTypeResponse(attributeDataList: [.init(attributeHandle: 1, attributeValue: [1]), .init(attributeHandle: 2, attributeValue: [1, 2])])
        }
        #expect(throws: DecodeError.self) { try ReadByTypeResponse(attributeDataList: [.init(attributeHandle: 1, attributeValue: .init(repeating: 0, count: 254))]) }
        #expect(throws: DecodeError.self) { try ReadByGroupTypeResponse(attributeDataList: []) }
        #expect(throws: DecodeError.self) { try FindInformationResponse(format: .bits16, informationData: [.init(handle: 1, type: sampleUUID128)]) }
        #expect(throws: DecodeError.self) { try FindInformationResponse(informationData: []) }
        #expect(throws: DecodeError.self) { try FindByTypeValueResponse(handlesInformationList: []) }
        #expect(throws: DecodeError.self) { try ReadMultipleRequest(setOfHandles: []) }
        #expect(throws: DecodeError.self) { try SignedWriteCommand(attributeHandle: 1, attributeValue: [], authenticationSignature: [1, 2]) }
        #expect(throws: DecodeError.self) { try MultipleHandleValueNotification(handleLengthValueTupleList: []) }
        #expect(throws: DecodeError.self) { try ReadMultipleVariableResponse.LengthValue(valueLength: 1, attributeValue: [1, 2]) }
        #expect(throws: DecodeError.self) {
            try ReadMultipleVariableResponse(lengthValueTupleList: [
                try .init(valueLength: 3, attributeValue: [1]), try .init(attributeValue: [2]),
            ])
        }
        // The automatic format picks 128 bits as soon as one type needs it.
        let mixed = try? FindInformationResponse(informationData: [
            .init(handle: 1, type: BluetoothUUID(UInt16(0x2800))), .init(handle: 2, type: sampleUUID128),
        ])
        #expect(mixed?.format == .bits128)
        #expect(mixed.map { $0.encode().count } == 2 + 2 * 18)
    }

    @Test func typedDecodeRejectsAnotherOpcode() {
        #expect(throws: DecodeError.invalidValue(field: "ATT opcode", value: 0x0B)) {
            try ReadRequest(decodingPDU: [0x0B, 0x01, 0x00])
        }
        #expect(throws: DecodeError.truncated(needed: 1, available: 0)) { try ReadRequest(decodingPDU: []) }
    }

    @Test func signedBytesCoverOpcodeHandleAndValue() throws {
        let command = try SignedWriteCommand(attributeHandle: 0x0203, attributeValue: [9], authenticationSignature: Array(repeating: 0, count: 12))
        #expect(command.signedBytes == [0xD2, 0x03, 0x02, 0x09])
    }

    @Test func truncatedReadMultipleVariableTupleIsMarked() throws {
        let response = try ReadMultipleVariableResponse(decodingPDU: Hex.bytes("21 02 00 AA BB 05 00 CC")!)
        #expect(response.lengthValueTupleList.map(\.isTruncated) == [false, true])
        // A huge Value Length takes only what is there.
        let huge = try ReadMultipleVariableResponse(decodingPDU: Hex.bytes("21 FF FF 01")!)
        #expect(huge.lengthValueTupleList[0].attributeValue == [1])
    }
}
