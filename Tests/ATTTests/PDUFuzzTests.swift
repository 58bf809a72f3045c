import ATT
import BluetoothCore
import Testing
import TestSupport

extension SeededRandom {
    /// Random bytes, eight per draw: the fuzz loops spend most of their time here.
    mutating func fastBytes(_ count: Int) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(count)
        while out.count < count {
            var word = next()
            for _ in 0..<min(8, count - out.count) {
                out.append(UInt8(truncatingIfNeeded: word))
                word >>= 8
            }
        }
        return out
    }

    mutating func byte() -> UInt8 { UInt8(truncatingIfNeeded: next()) }
    mutating func word() -> UInt16 { UInt16(truncatingIfNeeded: next()) }
    mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &self) }
    mutating func value(_ maximum: Int = 40) -> [UInt8] { fastBytes(int(0...maximum)) }
    mutating func uuid() -> BluetoothUUID {
        switch int(0...2) {
        case 0: BluetoothUUID(word())
        case 1: BluetoothUUID(UInt32(truncatingIfNeeded: next()))
        default: BluetoothUUID(high: next(), low: next())
        }
    }
}

/// Random, valid values of every modelled PDU.
enum RandomPDUs {
    static func make(_ opcode: ATTOpcode, _ r: inout SeededRandom) -> ATTPDU {
        switch opcode {
        case .errorResponse:
            return .errorResponse(.init(requestOpcodeInError: .init(rawValue: r.byte()), attributeHandleInError: r.word(), errorCode: .init(rawValue: r.byte())))
        case .exchangeMTURequest: return .exchangeMTURequest(.init(clientRxMTU: r.word()))
        case .exchangeMTUResponse: return .exchangeMTUResponse(.init(serverRxMTU: r.word()))
        case .findInformationRequest: return .findInformationRequest(.init(startingHandle: r.word(), endingHandle: r.word()))
        case .findInformationResponse:
            let wide = r.int(0...1) == 1
            let entries = (0..<r.int(1...8)).map { _ in
                FindInformationResponse.InformationData(handle: r.word(), type: wide ? r.uuid() : BluetoothUUID(r.word()))
            }
            return .findInformationResponse(try! .init(format: wide ? .bits128 : .bits16, informationData: entries))
        case .findByTypeValueRequest:
            return .findByTypeValueRequest(.init(startingHandle: r.word(), endingHandle: r.word(), attributeType: r.word(), attributeValue: r.value()))
        case .findByTypeValueResponse:
            return .findByTypeValueResponse(try! .init(handlesInformationList: (0..<r.int(1...8)).map { _ in
                .init(foundAttributeHandle: r.word(), groupEndHandle: r.word())
            }))
        case .readByTypeRequest:
            return .readByTypeRequest(.init(startingHandle: r.word(), endingHandle: r.word(), attributeType: r.uuid()))
        case .readByTypeResponse:
            let length = r.int(0...20)
            return .readByTypeResponse(try! .init(attributeDataList: (0..<r.int(1...6)).map { _ in
                .init(attributeHandle: r.word(), attributeValue: r.fastBytes(length))
            }))
        case .readRequest: return .readRequest(.init(attributeHandle: r.word()))
        case .readResponse: return .readResponse(.init(attributeValue: r.value()))
        case .readBlobRequest: return .readBlobRequest(.init(attributeHandle: r.word(), valueOffset: r.word()))
        case .readBlobResponse: return .readBlobResponse(.init(partAttributeValue: r.value()))
        case .readMultipleRequest: return .readMultipleRequest(try! .init(setOfHandles: (0..<r.int(1...10)).map { _ in r.word() }))
        case .readMultipleResponse: return .readMultipleResponse(.init(setOfValues: r.value()))
        case .readByGroupTypeRequest:
            return .readByGroupTypeRequest(.init(startingHandle: r.word(), endingHandle: r.word(), attributeGroupType: r.uuid()))
        case .readByGroupTypeResponse:
            let length = r.int(0...18)
            return .readByGroupTypeResponse(try! .init(attributeDataList: (0..<r.int(1...6)).map { _ in
                .init(attributeHandle: r.word(), endGroupHandle: r.word(), attributeValue: r.fastBytes(length))
            }))
        case .readMultipleVariableRequest:
            return .readMultipleVariableRequest(try! .init(setOfHandles: (0..<r.int(1...10)).map { _ in r.word() }))
        case .readMultipleVariableResponse:
            var tuples = (0..<r.int(1...5)).map { _ in try! ReadMultipleVariableResponse.LengthValue(attributeValue: r.value(12)) }
            if r.int(0...1) == 1, let last = tuples.popLast() {
                tuples.append(try! .init(valueLength: UInt16(last.attributeValue.count + r.int(0...300)), attributeValue: last.attributeValue))
            }
            return .readMultipleVariableResponse(try! .init(lengthValueTupleList: tuples))
        case .writeRequest: return .writeRequest(.init(attributeHandle: r.word(), attributeValue: r.value()))
        case .writeResponse: return .writeResponse(.init())
        case .writeCommand: return .writeCommand(.init(attributeHandle: r.word(), attributeValue: r.value()))
        case .signedWriteCommand:
            return .signedWriteCommand(try! .init(attributeHandle: r.word(), attributeValue: r.value(), authenticationSignature: r.fastBytes(12)))
        case .prepareWriteRequest:
            return .prepareWriteRequest(.init(attributeHandle: r.word(), valueOffset: r.word(), partAttributeValue: r.value()))
        case .prepareWriteResponse:
            return .prepareWriteResponse(.init(attributeHandle: r.word(), valueOffset: r.word(), partAttributeValue: r.value()))
        case .executeWriteRequest: return .executeWriteRequest(.init(flags: .init(rawValue: r.byte())))
        case .executeWriteResponse: return .executeWriteResponse(.init())
        case .handleValueNotification: return .handleValueNotification(.init(attributeHandle: r.word(), attributeValue: r.value()))
        case .handleValueIndication: return .handleValueIndication(.init(attributeHandle: r.word(), attributeValue: r.value()))
        case .handleValueConfirmation: return .handleValueConfirmation(.init())
        case .multipleHandleValueNotification:
            return .multipleHandleValueNotification(try! .init(handleLengthValueTupleList: (0..<r.int(1...5)).map { _ in
                .init(attributeHandle: r.word(), attributeValue: r.value(12))
            }))
        default:
            return .unknown(opcode, parameters: r.value())
        }
    }
}

/// A decoder under fuzz: the opcode that selects it.
struct FuzzedDecoder: Sendable, CustomStringConvertible {
    let opcode: ATTOpcode
    var description: String { opcode.name }

    static let all: [FuzzedDecoder] = [
        0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x0E, 0x0F, 0x10, 0x11,
        0x12, 0x13, 0x16, 0x17, 0x18, 0x19, 0x1B, 0x1D, 0x1E, 0x20, 0x21, 0x23, 0x52, 0xD2,
    ].map { FuzzedDecoder(opcode: ATTOpcode(rawValue: $0)) }
}

/// Seeded random input against every PDU decoder. The properties: decoding never traps,
/// fails only with a `DecodeError`, never turns a modelled opcode into `.unknown`, and what
/// decodes re-encodes to exactly the input bytes. Seeds are fixed, so a failure replays.
@Suite struct PDUFuzzTests {
    static let inputsPerDecoder = 100_000

    /// The first violated property for `bytes`, if any; and whether it decoded.
    static func check(_ bytes: [UInt8]) -> (decoded: Bool, violation: String?) {
        let pdu: ATTPDU
        do {
            pdu = try ATTPDU(decoding: bytes)
        } catch {
            return (false, nil)  // typed by the signature: DecodeError
        }
        if pdu.opcode.rawValue != bytes[0] { return (true, "decoded as \(pdu.opcode): \(Hex.string(bytes))") }
        if case .unknown = pdu, pdu.opcode.name != "unknown ATT opcode" {
            return (true, "modelled opcode decoded as unknown: \(Hex.string(bytes))")
        }
        if pdu.encode() != bytes { return (true, "re-encoding differs: \(Hex.string(bytes)) -> \(Hex.string(pdu.encode()))") }
        return (true, nil)
    }

    @Test(arguments: FuzzedDecoder.all)
    func decoderSurvivesRandomInput(_ decoder: FuzzedDecoder) async {
        await cpuBound {
            var random = SeededRandom(seed: 0xA77_0000 &+ UInt64(decoder.opcode.rawValue))
            var failures: [String] = []
            var decoded = 0
            let opcode = decoder.opcode.rawValue
            for index in 0..<Self.inputsPerDecoder {
                await yieldPeriodically(iteration: index)
                var bytes: [UInt8]
                switch index % 4 {
                case 0:
                    // The opcode and random parameters, mostly short so fixed layouts are hit.
                    bytes = [opcode] + random.fastBytes(random.int(0...(index % 8 == 0 ? 300 : 24)))
                case 1:
                    // A valid value must come back unchanged.
                    let value = RandomPDUs.make(decoder.opcode, &random)
                    bytes = value.encode()
                    if (try? ATTPDU(decoding: bytes)) != value, failures.count < 5 {
                        failures.append("valid value did not round-trip: \(Hex.string(bytes))")
                    }
                case 2:
                    // A valid encoding damaged one way: cut, a byte changed, or bytes added.
                    bytes = RandomPDUs.make(decoder.opcode, &random).encode()
                    switch random.int(0...2) {
                    case 0: bytes = Array(bytes.prefix(random.int(1...bytes.count)))
                    case 1: if bytes.count > 1 { bytes[random.int(1...bytes.count - 1)] = random.byte() }
                    default: bytes += random.fastBytes(random.int(1...4))
                    }
                default:
                    // List PDUs: a small length or format byte first, so element parsing is reached.
                    bytes = [opcode, UInt8(random.int(0...22))] + random.fastBytes(random.int(0...40))
                }
                let outcome = Self.check(bytes)
                if outcome.decoded { decoded += 1 }
                if let violation = outcome.violation, failures.count < 5 { failures.append(violation) }
            }
            #expect(failures.isEmpty, "\(decoder): \(failures.joined(separator: "\n"))")
            // Meaningful only if a fair share of inputs reach a successful decode.
            #expect(decoded >= Self.inputsPerDecoder / 4)
        }
    }

    @Test func fullyRandomBytesNeverTrap() async {
        await cpuBound {
            var random = SeededRandom(seed: 0xA77_FFFF)
            var failures: [String] = []
            for iteration in 0..<Self.inputsPerDecoder {
                await yieldPeriodically(iteration: iteration)
                let bytes = random.fastBytes(random.int(1...64))
                if let violation = Self.check(bytes).violation, failures.count < 5 { failures.append(violation) }
            }
            #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
        }
    }
}
