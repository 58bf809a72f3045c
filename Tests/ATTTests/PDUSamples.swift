import ATT
import BluetoothCore

/// A PDU written out by hand from the specification's layout (Core 5.4 Vol 3 Part F 3.4),
/// with the value it must decode to.
struct PDUSample: Sendable, CustomStringConvertible {
    let name: String
    let hex: String
    let value: ATTPDU
    /// Bytes of fixed fields (opcode included): every shorter prefix must be an error.
    let fixedLength: Int

    var bytes: [UInt8] { Hex.bytes(hex)! }

    /// PDUs with no value or list tail: one byte more must be an error.
    static let fixedSizeOpcodes: Set<UInt8> = [0x01, 0x02, 0x03, 0x04, 0x08, 0x0A, 0x0C, 0x10, 0x13, 0x18, 0x19, 0x1E]
    var isFixedSize: Bool { Self.fixedSizeOpcodes.contains(bytes[0]) }
    var description: String { name }
}

func uuid128(_ text: String) -> BluetoothUUID { BluetoothUUID(text)! }

/// The 128-bit UUID 12345678-9ABC-DEF0-1122-334455667788, least significant byte first.
let sampleUUID128Hex = "88 77 66 55 44 33 22 11 F0 DE BC 9A 78 56 34 12"
let sampleUUID128 = uuid128("12345678-9ABC-DEF0-1122-334455667788")
/// The Base UUID form of 0x2803, written out in 128 bits.
let characteristicUUIDAs128Hex = "FB 34 9B 5F 80 00 00 80 00 10 00 00 03 28 00 00"

enum PDUSamples {
    static let all: [PDUSample] = [
        PDUSample(
            name: "Error Response: Attribute Not Found for Read By Group Type at 0x0001", hex: "01 10 01 00 0A",
            value: .errorResponse(.init(requestOpcodeInError: .readByGroupTypeRequest, attributeHandleInError: 0x0001, errorCode: .attributeNotFound)),
            fixedLength: 5),
        PDUSample(name: "Exchange MTU Request 517", hex: "02 05 02", value: .exchangeMTURequest(.init(clientRxMTU: 517)), fixedLength: 3),
        PDUSample(name: "Exchange MTU Response 23", hex: "03 17 00", value: .exchangeMTUResponse(.init(serverRxMTU: 23)), fixedLength: 3),
        PDUSample(
            name: "Find Information Request", hex: "04 01 00 FF FF",
            value: .findInformationRequest(.init(startingHandle: 1, endingHandle: 0xFFFF)), fixedLength: 5),
        PDUSample(
            name: "Find Information Response, format 1", hex: "05 01 01 00 00 28 02 00 03 28",
            value: .findInformationResponse(try! .init(format: .bits16, informationData: [
                .init(handle: 1, type: BluetoothUUID(UInt16(0x2800))), .init(handle: 2, type: BluetoothUUID(UInt16(0x2803))),
            ])),
            fixedLength: 6),
        PDUSample(
            name: "Find Information Response, format 2", hex: "05 02 10 00 \(sampleUUID128Hex)",
            value: .findInformationResponse(try! .init(format: .bits128, informationData: [.init(handle: 0x10, type: sampleUUID128)])),
            fixedLength: 20),
        PDUSample(
            name: "Find Information Response, format 2 holding a Base UUID", hex: "05 02 03 00 \(characteristicUUIDAs128Hex)",
            value: .findInformationResponse(try! .init(format: .bits128, informationData: [.init(handle: 3, type: BluetoothUUID(UInt16(0x2803)))])),
            fixedLength: 20),
        PDUSample(
            name: "Find By Type Value Request: primary service 0x180D", hex: "06 01 00 FF FF 00 28 0D 18",
            value: .findByTypeValueRequest(.init(startingHandle: 1, endingHandle: 0xFFFF, attributeType: 0x2800, attributeValue: [0x0D, 0x18])),
            fixedLength: 7),
        PDUSample(
            name: "Find By Type Value Response", hex: "07 01 00 05 00 06 00 FF FF",
            value: .findByTypeValueResponse(try! .init(handlesInformationList: [
                .init(foundAttributeHandle: 1, groupEndHandle: 5), .init(foundAttributeHandle: 6, groupEndHandle: 0xFFFF),
            ])),
            fixedLength: 5),
        PDUSample(
            name: "Read By Type Request, 16-bit type", hex: "08 01 00 FF FF 03 28",
            value: .readByTypeRequest(.init(startingHandle: 1, endingHandle: 0xFFFF, attributeType: BluetoothUUID(UInt16(0x2803)))),
            fixedLength: 7),
        PDUSample(
            name: "Read By Type Request, 128-bit type", hex: "08 01 00 FF FF \(sampleUUID128Hex)",
            value: .readByTypeRequest(.init(startingHandle: 1, endingHandle: 0xFFFF, attributeType: sampleUUID128)),
            fixedLength: 7),
        PDUSample(
            name: "Read By Type Response: two characteristic declarations", hex: "09 07 02 00 10 03 00 0D 2A 05 00 02 06 00 37 2A",
            value: .readByTypeResponse(try! .init(attributeDataList: [
                .init(attributeHandle: 2, attributeValue: [0x10, 0x03, 0x00, 0x0D, 0x2A]),
                .init(attributeHandle: 5, attributeValue: [0x02, 0x06, 0x00, 0x37, 0x2A]),
            ])),
            fixedLength: 9),
        PDUSample(name: "Read Request", hex: "0A 03 00", value: .readRequest(.init(attributeHandle: 3)), fixedLength: 3),
        PDUSample(name: "Read Response", hex: "0B 48 65 6C 6C 6F", value: .readResponse(.init(attributeValue: Array("Hello".utf8))), fixedLength: 1),
        PDUSample(name: "Read Response, empty value", hex: "0B", value: .readResponse(.init(attributeValue: [])), fixedLength: 1),
        PDUSample(
            name: "Read Blob Request", hex: "0C 03 00 16 00",
            value: .readBlobRequest(.init(attributeHandle: 3, valueOffset: 22)), fixedLength: 5),
        PDUSample(name: "Read Blob Response", hex: "0D 01 02", value: .readBlobResponse(.init(partAttributeValue: [1, 2])), fixedLength: 1),
        PDUSample(
            name: "Read Multiple Request", hex: "0E 03 00 05 00",
            value: .readMultipleRequest(try! .init(setOfHandles: [3, 5])), fixedLength: 3),
        PDUSample(name: "Read Multiple Response", hex: "0F 01 02 03", value: .readMultipleResponse(.init(setOfValues: [1, 2, 3])), fixedLength: 1),
        PDUSample(
            name: "Read By Group Type Request: primary services", hex: "10 01 00 FF FF 00 28",
            value: .readByGroupTypeRequest(.init(startingHandle: 1, endingHandle: 0xFFFF, attributeGroupType: BluetoothUUID(UInt16(0x2800)))),
            fixedLength: 7),
        PDUSample(
            name: "Read By Group Type Request, 128-bit form of 0x2800", hex: "10 01 00 FF FF FB 34 9B 5F 80 00 00 80 00 10 00 00 00 28 00 00",
            value: try! ATTPDU(decoding: Hex.bytes("10 01 00 FF FF FB 34 9B 5F 80 00 00 80 00 10 00 00 00 28 00 00")!),
            fixedLength: 7),
        PDUSample(
            name: "Read By Group Type Response: two services", hex: "11 06 01 00 05 00 00 18 06 00 09 00 01 18",
            value: .readByGroupTypeResponse(try! .init(attributeDataList: [
                .init(attributeHandle: 1, endGroupHandle: 5, attributeValue: [0x00, 0x18]),
                .init(attributeHandle: 6, endGroupHandle: 9, attributeValue: [0x01, 0x18]),
            ])),
            fixedLength: 8),
        PDUSample(
            name: "Read Multiple Variable Request", hex: "20 03 00 05 00",
            value: .readMultipleVariableRequest(try! .init(setOfHandles: [3, 5])), fixedLength: 3),
        PDUSample(
            name: "Read Multiple Variable Response", hex: "21 02 00 AA BB 01 00 CC",
            value: .readMultipleVariableResponse(try! .init(lengthValueTupleList: [
                try! .init(attributeValue: [0xAA, 0xBB]), try! .init(attributeValue: [0xCC]),
            ])),
            fixedLength: 3),
        PDUSample(
            name: "Read Multiple Variable Response, last value cut at the MTU", hex: "21 02 00 AA BB 05 00 CC",
            value: .readMultipleVariableResponse(try! .init(lengthValueTupleList: [
                try! .init(attributeValue: [0xAA, 0xBB]), try! .init(valueLength: 5, attributeValue: [0xCC]),
            ])),
            fixedLength: 3),
        PDUSample(
            name: "Write Request", hex: "12 03 00 01 00",
            value: .writeRequest(.init(attributeHandle: 3, attributeValue: [1, 0])), fixedLength: 3),
        PDUSample(name: "Write Response", hex: "13", value: .writeResponse(.init()), fixedLength: 1),
        PDUSample(
            name: "Write Command", hex: "52 03 00 01",
            value: .writeCommand(.init(attributeHandle: 3, attributeValue: [1])), fixedLength: 3),
        PDUSample(
            name: "Signed Write Command", hex: "D2 03 00 01 02 A0 A1 A2 A3 A4 A5 A6 A7 A8 A9 AA AB",
            value: .signedWriteCommand(try! .init(attributeHandle: 3, attributeValue: [1, 2], authenticationSignature: Array(0xA0...0xAB))),
            fixedLength: 15),
        PDUSample(
            name: "Prepare Write Request", hex: "16 03 00 00 00 41 42",
            value: .prepareWriteRequest(.init(attributeHandle: 3, valueOffset: 0, partAttributeValue: [0x41, 0x42])), fixedLength: 5),
        PDUSample(
            name: "Prepare Write Response", hex: "17 03 00 12 00 41 42",
            value: .prepareWriteResponse(.init(attributeHandle: 3, valueOffset: 0x12, partAttributeValue: [0x41, 0x42])), fixedLength: 5),
        PDUSample(
            name: "Execute Write Request: write", hex: "18 01",
            value: .executeWriteRequest(.init(flags: .immediatelyWriteAllPendingPreparedValues)), fixedLength: 2),
        PDUSample(
            name: "Execute Write Request: cancel", hex: "18 00",
            value: .executeWriteRequest(.init(flags: .cancelAllPreparedWrites)), fixedLength: 2),
        PDUSample(name: "Execute Write Response", hex: "19", value: .executeWriteResponse(.init()), fixedLength: 1),
        PDUSample(
            name: "Handle Value Notification", hex: "1B 03 00 64",
            value: .handleValueNotification(.init(attributeHandle: 3, attributeValue: [100])), fixedLength: 3),
        PDUSample(
            name: "Handle Value Indication", hex: "1D 03 00 64",
            value: .handleValueIndication(.init(attributeHandle: 3, attributeValue: [100])), fixedLength: 3),
        PDUSample(name: "Handle Value Confirmation", hex: "1E", value: .handleValueConfirmation(.init()), fixedLength: 1),
        PDUSample(
            name: "Multiple Handle Value Notification", hex: "23 03 00 01 00 64 07 00 02 00 01 02",
            value: .multipleHandleValueNotification(try! .init(handleLengthValueTupleList: [
                .init(attributeHandle: 3, attributeValue: [100]), .init(attributeHandle: 7, attributeValue: [1, 2]),
            ])),
            fixedLength: 5),
        PDUSample(
            name: "Unknown request 0x3F", hex: "3F 01 02",
            value: .unknown(ATTOpcode(rawValue: 0x3F), parameters: [1, 2]), fixedLength: 1),
        PDUSample(
            name: "Unknown command 0x7F", hex: "7F",
            value: .unknown(ATTOpcode(rawValue: 0x7F), parameters: []), fixedLength: 1),
    ]
}

/// Bytes that carry a modelled opcode but break its layout, each with why.
enum MalformedPDUs {
    static let all: [(hex: String, why: String)] = [
        ("", "no opcode"),
        ("01 10 01 00", "Error Response one byte short"),
        ("01 10 01 00 0A 00", "Error Response one byte long"),
        ("02 05 02 00", "Exchange MTU Request one byte long"),
        ("03 17", "Exchange MTU Response one byte short"),
        ("04 01 00 FF FF 00", "Find Information Request one byte long"),
        ("05 03 01 00 00 28", "Find Information Response with an unknown format"),
        ("05 00 01 00 00 28", "Find Information Response with format zero"),
        ("05 01", "Find Information Response with no entries"),
        ("05 01 01 00 00 28 02 00", "Find Information Response whose last 16-bit entry is cut"),
        ("05 02 01 00 00 28", "Find Information Response: 16-bit entries under format 2"),
        ("07", "Find By Type Value Response with no entries"),
        ("07 01 00 05 00 06", "Find By Type Value Response with a partial entry"),
        ("08 01 00 FF FF 03", "Read By Type Request with a 1-byte type"),
        ("08 01 00 FF FF 01 02 03 04", "Read By Type Request with a 32-bit type (ATT carries 16 or 128)"),
        ("08 01 00 FF FF", "Read By Type Request with no type"),
        ("09 00", "Read By Type Response with Length 0"),
        ("09 00 01 02", "Read By Type Response with Length 0 and data"),
        ("09 01 02 00", "Read By Type Response with Length 1 (shorter than a handle)"),
        ("09 07", "Read By Type Response with no entries"),
        ("09 07 02 00 10 03 00 0D 2A 05", "Read By Type Response whose Length does not divide the rest"),
        ("09 FF 02 00 10", "Read By Type Response with Length longer than the rest"),
        ("0A 03", "Read Request one byte short"),
        ("0A 03 00 00", "Read Request one byte long"),
        ("0C 03 00 16", "Read Blob Request one byte short"),
        ("0E", "Read Multiple Request with no handles"),
        ("0E 03 00 05", "Read Multiple Request with an odd byte"),
        ("10 01 00 FF FF 00", "Read By Group Type Request with a 1-byte type"),
        ("10 01 00 FF FF 00 28 00", "Read By Group Type Request with a 3-byte type"),
        ("11 03 01 00 05", "Read By Group Type Response with Length 3 (shorter than two handles)"),
        ("11 00", "Read By Group Type Response with Length 0"),
        ("11 06", "Read By Group Type Response with no entries"),
        ("11 06 01 00 05 00 00 18 06", "Read By Group Type Response whose Length does not divide the rest"),
        ("12 03", "Write Request one byte short"),
        ("13 00", "Write Response with a parameter"),
        ("16 03 00 00", "Prepare Write Request one byte short"),
        ("18", "Execute Write Request without flags"),
        ("18 01 00", "Execute Write Request one byte long"),
        ("19 00", "Execute Write Response with a parameter"),
        ("1B 03", "Handle Value Notification one byte short"),
        ("1D", "Handle Value Indication without a handle"),
        ("1E 00", "Handle Value Confirmation with a parameter"),
        ("20", "Read Multiple Variable Request with no handles"),
        ("20 03 00 05", "Read Multiple Variable Request with an odd byte"),
        ("21", "Read Multiple Variable Response with no tuples"),
        ("21 02 00 AA BB 05", "Read Multiple Variable Response cut inside a Value Length"),
        ("23", "Multiple Handle Value Notification with no tuples"),
        ("23 03 00 05 00 01", "Multiple Handle Value Notification whose Length exceeds the rest"),
        ("23 03 00 01", "Multiple Handle Value Notification cut inside a Length"),
        ("52 03", "Write Command one byte short"),
        ("D2 03 00 A0 A1 A2 A3 A4 A5 A6 A7 A8 A9 AA", "Signed Write Command with an 11-byte signature"),
    ]
}
