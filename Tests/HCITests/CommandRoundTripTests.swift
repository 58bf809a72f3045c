import BluetoothCore
import HCI
import Testing

/// Every sample encodes, decodes back to itself, and refuses every truncation and any
/// trailing byte with a typed error.
@Suite struct CommandRoundTripTests {
    @Test(arguments: Samples.commands)
    func parametersRoundTrip(_ sample: CommandSample) throws {
        #expect(try sample.decodesToOriginal(sample.parameters))
        // The packet is opcode, length, parameters.
        #expect(sample.packet.count == 3 + sample.parameters.count)
        #expect(UInt16(sample.packet[0]) | UInt16(sample.packet[1]) << 8 == sample.type.opcode.rawValue)
        #expect(Int(sample.packet[2]) == sample.parameters.count)
        #expect(sample.parameters.count <= 255)
    }

    @Test(arguments: Samples.commands)
    func everyTruncationIsATypedError(_ sample: CommandSample) {
        for length in 0..<sample.parameters.count {
            let prefix = Array(sample.parameters.prefix(length))
            #expect(throws: DecodeError.self, "\(length) of \(sample.parameters.count)") {
                _ = try sample.decodesToOriginal(prefix)
            }
        }
    }

    @Test(arguments: Samples.commands)
    func trailingBytesAreRefused(_ sample: CommandSample) {
        #expect(throws: DecodeError.trailingBytes(count: 1)) { _ = try sample.decodesToOriginal(sample.parameters + [0x00]) }
        #expect(throws: DecodeError.trailingBytes(count: 3)) { _ = try sample.decodesToOriginal(sample.parameters + [0xFF, 1, 2]) }
    }

    @Test(arguments: Samples.returns)
    func returnParametersRoundTrip(_ sample: ReturnSample) throws {
        #expect(try sample.decodesToOriginal(sample.bytes))
        for length in 0..<sample.bytes.count {
            #expect(throws: DecodeError.self) { _ = try sample.decodesToOriginal(Array(sample.bytes.prefix(length))) }
        }
        #expect(throws: DecodeError.trailingBytes(count: 1)) { _ = try sample.decodesToOriginal(sample.bytes + [0x00]) }
    }
}
