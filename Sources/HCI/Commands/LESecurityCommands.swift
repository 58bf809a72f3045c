import BluetoothCore

// LE encryption (Core Vol 4 Part E 7.8.22 - 7.8.26): the controller's AES-128 block and
// random number generator, and starting link-layer encryption with a key from SMP.
//
// 128-bit values (keys, plaintext, ciphertext) are held exactly as HCI carries them, least
// significant octet first; converting from the specification's most-significant-first
// notation is the caller's job (SMP does it once, in one place).

/// The length of LE keys and AES blocks.
let leKeyLength = 16

/// LE Encrypt (7.8.22): AES-128 of one block with the given key.
public struct LEEncrypt: HCICommand, Equatable {
    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.le, ocf: 0x0017)
    public static let name = "LE Encrypt"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (27, 6) }

    /// 16 octets.
    public let key: [UInt8]
    /// 16 octets.
    public let plaintextData: [UInt8]

    /// Throws `lengthMismatch` unless `key` and `plaintextData` are 16 octets each.
    public init(key: [UInt8], plaintextData: [UInt8]) throws(DecodeError) {
        try checkParameterLength(key, is: leKeyLength)
        try checkParameterLength(plaintextData, is: leKeyLength)
        self.key = key
        self.plaintextData = plaintextData
    }

    public init(parameters reader: inout ByteReader) throws(DecodeError) {
        key = try reader.readFixedParameter(count: leKeyLength)
        plaintextData = try reader.readFixedParameter(count: leKeyLength)
        try reader.expectEnd()
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.write(contentsOf: key)
        writer.write(contentsOf: plaintextData)
    }

    public struct ReturnParameters: HCIReturnParameters, Equatable {
        /// 16 octets.
        public let encryptedData: [UInt8]

        /// Throws `lengthMismatch` unless `encryptedData` is 16 octets.
        public init(encryptedData: [UInt8]) throws(DecodeError) {
            try checkParameterLength(encryptedData, is: leKeyLength)
            self.encryptedData = encryptedData
        }

        public init(decoding reader: inout ByteReader) throws(DecodeError) {
            encryptedData = try reader.readFixedParameter(count: leKeyLength)
            try reader.expectEnd()
        }

        public func encode(into writer: inout ByteWriter) { writer.write(contentsOf: encryptedData) }
    }
}

/// LE Rand (7.8.23): 64 bits from the controller's random number generator.
public struct LERand: HCICommand, Equatable {
    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.le, ocf: 0x0018)
    public static let name = "LE Rand"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (27, 7) }

    public init() {}
    public init(parameters reader: inout ByteReader) throws(DecodeError) { try reader.expectEnd() }
    public func encodeParameters(into writer: inout ByteWriter) {}

    public struct ReturnParameters: HCIReturnParameters, Equatable {
        public let randomNumber: UInt64

        public init(randomNumber: UInt64) { self.randomNumber = randomNumber }

        public init(decoding reader: inout ByteReader) throws(DecodeError) {
            randomNumber = try reader.readUInt64()
            try reader.expectEnd()
        }

        public func encode(into writer: inout ByteWriter) { writer.write(randomNumber) }
    }
}

/// LE Enable Encryption (7.8.24): the central starts (or refreshes) encryption; finishes
/// with Encryption Change or Encryption Key Refresh Complete.
public struct LEEnableEncryption: HCICommand, Equatable {
    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.le, ocf: 0x0019)
    public static let name = "LE Enable Encryption"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (28, 0) }
    public static var completesWithStatus: Bool { true }

    public let connectionHandle: UInt16
    /// Rand of legacy pairing; zero for LE Secure Connections keys.
    public let randomNumber: UInt64
    /// EDIV of legacy pairing; zero for LE Secure Connections keys.
    public let encryptedDiversifier: UInt16
    /// 16 octets.
    public let longTermKey: [UInt8]

    /// Throws `lengthMismatch` unless `longTermKey` is 16 octets.
    public init(connectionHandle: UInt16, randomNumber: UInt64, encryptedDiversifier: UInt16, longTermKey: [UInt8]) throws(DecodeError) {
        try checkParameterLength(longTermKey, is: leKeyLength)
        self.connectionHandle = connectionHandle
        self.randomNumber = randomNumber
        self.encryptedDiversifier = encryptedDiversifier
        self.longTermKey = longTermKey
    }

    public init(parameters reader: inout ByteReader) throws(DecodeError) {
        connectionHandle = try reader.readUInt16()
        randomNumber = try reader.readUInt64()
        encryptedDiversifier = try reader.readUInt16()
        longTermKey = try reader.readFixedParameter(count: leKeyLength)
        try reader.expectEnd()
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.write(connectionHandle)
        writer.write(randomNumber)
        writer.write(encryptedDiversifier)
        writer.write(contentsOf: longTermKey)
    }
}

/// LE Long Term Key Request Reply (7.8.25): the peripheral hands the controller the key
/// the central asked for.
public struct LELongTermKeyRequestReply: HCICommand, Equatable {
    public typealias ReturnParameters = ConnectionHandleReturnParameters

    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.le, ocf: 0x001A)
    public static let name = "LE Long Term Key Request Reply"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (28, 1) }

    public let connectionHandle: UInt16
    /// 16 octets.
    public let longTermKey: [UInt8]

    /// Throws `lengthMismatch` unless `longTermKey` is 16 octets.
    public init(connectionHandle: UInt16, longTermKey: [UInt8]) throws(DecodeError) {
        try checkParameterLength(longTermKey, is: leKeyLength)
        self.connectionHandle = connectionHandle
        self.longTermKey = longTermKey
    }

    public init(parameters reader: inout ByteReader) throws(DecodeError) {
        connectionHandle = try reader.readUInt16()
        longTermKey = try reader.readFixedParameter(count: leKeyLength)
        try reader.expectEnd()
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.write(connectionHandle)
        writer.write(contentsOf: longTermKey)
    }
}

/// LE Long Term Key Request Negative Reply (7.8.26): the peripheral has no key for the
/// central's request.
public struct LELongTermKeyRequestNegativeReply: ConnectionHandleCommand, Equatable {
    public typealias ReturnParameters = ConnectionHandleReturnParameters

    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.le, ocf: 0x001B)
    public static let name = "LE Long Term Key Request Negative Reply"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (28, 2) }

    public let connectionHandle: UInt16

    public init(connectionHandle: UInt16) { self.connectionHandle = connectionHandle }
}
