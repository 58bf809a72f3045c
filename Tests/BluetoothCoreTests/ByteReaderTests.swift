import BluetoothCore
import Testing
import TestSupport

@Suite struct ByteReaderTests {
    @Test func readsLittleEndianFields() throws {
        var reader = ByteReader([0x01, 0x34, 0x12, 0x56, 0x34, 0x12, 0x78, 0x56, 0x34, 0x12, 0xFF])
        #expect(try reader.readUInt8() == 0x01)
        #expect(try reader.readUInt16() == 0x1234)
        #expect(try reader.readUInt24() == 0x123456)
        #expect(try reader.readUInt32() == 0x1234_5678)
        #expect(try reader.readInt8() == -1)
        #expect(reader.isAtEnd)
        try reader.expectEnd()
    }

    @Test func shortInputThrowsTypedError() {
        var reader = ByteReader([0x01])
        #expect(throws: DecodeError.truncated(needed: 2, available: 1)) { try reader.readUInt16() }
        #expect(throws: DecodeError.truncated(needed: 5, available: 1)) { try reader.readBytes(5) }
        #expect(throws: DecodeError.truncated(needed: -1, available: 1)) { try reader.readBytes(-1) }
        #expect(throws: DecodeError.trailingBytes(count: 1)) { try reader.expectEnd() }
    }

    @Test func subReaderIsBounded() throws {
        var reader = ByteReader([1, 2, 3, 4])
        var sub = try reader.subReader(2)
        #expect(try sub.readUInt16() == 0x0201)
        #expect(throws: DecodeError.self) { try sub.readUInt8() }
        #expect(try reader.readUInt16() == 0x0403)
    }

    @Test func writerRoundTrips() throws {
        var writer = ByteWriter()
        writer.write(UInt8(7))
        writer.write(UInt16(0xBEEF))
        writer.writeUInt24(0xABCDEF)
        writer.write(UInt32(0xDEAD_BEEF))
        writer.write(UInt64(0x0102_0304_0506_0708))
        writer.write(BluetoothAddress(0xF00D_0000_0001))
        var reader = ByteReader(writer.bytes)
        #expect(try reader.readUInt8() == 7)
        #expect(try reader.readUInt16() == 0xBEEF)
        #expect(try reader.readUInt24() == 0xABCDEF)
        #expect(try reader.readUInt32() == 0xDEAD_BEEF)
        #expect(try reader.readUInt64() == 0x0102_0304_0506_0708)
        #expect(try reader.readAddress() == BluetoothAddress(0xF00D_0000_0001))
        try reader.expectEnd()
    }

    @Test func hexRoundTrips() {
        #expect(Hex.string([0x0A, 0xFF]) == "0AFF")
        #expect(Hex.bytes("0x0a ff") == [0x0A, 0xFF])
        #expect(Hex.bytes("0AF") == nil)
        #expect(Hex.bytes("zz") == nil)
    }

    @Test func randomReadsNeverTrap() async {
        await cpuBound {
            var random = SeededRandom(seed: 1)
            for iteration in 0..<100_000 {
                await yieldPeriodically(iteration: iteration)
                var reader = ByteReader(random.bytes(lengths: 0...12))
                for _ in 0..<4 {
                    switch UInt8.random(in: 0...4, using: &random) {
                    case 0: _ = try? reader.readUInt8()
                    case 1: _ = try? reader.readUInt32()
                    case 2: _ = try? reader.readBytes(Int.random(in: -2...8, using: &random))
                    case 3: _ = try? reader.readAddress()
                    default: _ = try? BluetoothUUID(littleEndian: reader.readRemaining())
                    }
                }
            }
        }
    }
}
