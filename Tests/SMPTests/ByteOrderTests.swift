import BluetoothCore
import SMP
import TestSupport
import Testing

@Suite struct ByteOrderTests {
    @Test func value128ConvertsBetweenSpecificationAndAirOrder() throws {
        let value = SampleData.v128("00010203 04050607 08090a0b 0c0d0e0f")
        #expect(value.bigEndianBytes == Array(0...15))
        #expect(value.littleEndianBytes == Array((0...15).reversed()))
        #expect(try SMPValue128(littleEndian: value.littleEndianBytes) == value)
        #expect(try SMPValue128(bigEndian: value.bigEndianBytes) == value)
        #expect(value.description == "00010203 04050607 08090a0b 0c0d0e0f")
    }

    @Test func valuesRoundTripBothOrders() throws {
        var random = SeededRandom(seed: 128_256)
        for _ in 0..<100 {
            let bytes16 = random.bytes(16)
            #expect(try SMPValue128(bigEndian: bytes16).bigEndianBytes == bytes16)
            #expect(try SMPValue128(littleEndian: bytes16).littleEndianBytes == bytes16)
            #expect(try SMPValue128(littleEndian: bytes16) == SMPValue128(bigEndian: bytes16.reversed()))
            let bytes32 = random.bytes(32)
            #expect(try SMPValue256(bigEndian: bytes32).bigEndianBytes == bytes32)
            #expect(try SMPValue256(littleEndian: bytes32).littleEndianBytes == bytes32)
            #expect(try SMPValue256(littleEndian: bytes32) == SMPValue256(bigEndian: bytes32.reversed()))
            let bytes64 = random.bytes(64)
            #expect(try P256PublicKey(littleEndian: bytes64).littleEndianBytes == bytes64)
            #expect(try P256PublicKey(bigEndian: bytes64).bigEndianBytes == bytes64)
        }
    }

    /// The Pairing Public Key PDU carries X then Y, each least significant octet first.
    @Test func publicKeyAirOrderIsEachCoordinateLittleEndian() throws {
        let key = SampleData.publicKeyA
        let air = key.littleEndianBytes
        #expect(Array(air.prefix(4)) == [0xe6, 0x9d, 0x35, 0x0e])
        #expect(Array(air[32..<36]) == [0x8b, 0xd2, 0x89, 0x15])
        #expect(Array(key.bigEndianBytes.prefix(4)) == [0x20, 0xb0, 0x03, 0xd2])
        #expect(try P256PublicKey(littleEndian: air) == key)
    }

    @Test func wrongLengthsAreRefused() {
        #expect(throws: DecodeError.lengthMismatch(declared: 16, actual: 15)) { try SMPValue128(littleEndian: [UInt8](repeating: 0, count: 15)) }
        #expect(throws: DecodeError.lengthMismatch(declared: 32, actual: 33)) { try SMPValue256(bigEndian: [UInt8](repeating: 0, count: 33)) }
        #expect(throws: DecodeError.lengthMismatch(declared: 64, actual: 63)) { try P256PublicKey(littleEndian: [UInt8](repeating: 0, count: 63)) }
        #expect(SMPValue128(hex: "0011") == nil)
        #expect(SMPValue256(hex: "zz") == nil)
    }

    @Test func value256OrdersAsANumber() {
        let small = SMPValue256(high: 0, low: .max)
        let large = SMPValue256(high: 1, low: 0)
        #expect(small < large)
        #expect(!(large < small))
    }
}
