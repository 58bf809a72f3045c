import BluetoothCore

/// Write Request (0x12, Core 5.4 Vol 3 Part F 3.4.5.1): write a value, answered with a
/// Write Response or an Error Response.
public struct WriteRequest: AttributeHandleValueParameters, Hashable {
    public static let opcode = ATTOpcode.writeRequest

    public var attributeHandle: UInt16
    public var attributeValue: [UInt8]

    public init(attributeHandle: UInt16, attributeValue: [UInt8]) {
        self.attributeHandle = attributeHandle
        self.attributeValue = attributeValue
    }
}

/// Write Response (0x13, 3.4.5.2): no parameters.
public struct WriteResponse: ATTPDUParameters, Hashable {
    public static let opcode = ATTOpcode.writeResponse
    public init() {}
    public init(decoding reader: inout ByteReader) throws(DecodeError) {}
    public func encode(into writer: inout ByteWriter) {}
}

/// Write Command (0x52, 3.4.5.3): write a value with no response, not even an error.
public struct WriteCommand: AttributeHandleValueParameters, Hashable {
    public static let opcode = ATTOpcode.writeCommand

    public var attributeHandle: UInt16
    public var attributeValue: [UInt8]

    public init(attributeHandle: UInt16, attributeValue: [UInt8]) {
        self.attributeHandle = attributeHandle
        self.attributeValue = attributeValue
    }
}

/// Signed Write Command (0xD2, 3.4.5.4): a Write Command on an unencrypted link,
/// authenticated by a 12-byte signature (a sign counter and a CMAC, Vol 3 Part H 2.4.5).
///
/// The signature is kept raw: making and checking it needs the CSRK and the counters,
/// which are SMP's.
public struct SignedWriteCommand: ATTPDUParameters, Hashable {
    public static let opcode = ATTOpcode.signedWriteCommand

    public var attributeHandle: UInt16
    public var attributeValue: [UInt8]
    public let authenticationSignature: [UInt8]

    /// Throws unless the signature is exactly 12 bytes.
    public init(attributeHandle: UInt16, attributeValue: [UInt8], authenticationSignature: [UInt8]) throws(DecodeError) {
        guard authenticationSignature.count == ATTConstants.authenticationSignatureLength else {
            throw .lengthMismatch(declared: ATTConstants.authenticationSignatureLength, actual: authenticationSignature.count)
        }
        self.attributeHandle = attributeHandle
        self.attributeValue = attributeValue
        self.authenticationSignature = authenticationSignature
    }

    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        attributeHandle = try reader.readUInt16()
        let valueLength = reader.remaining - ATTConstants.authenticationSignatureLength
        guard valueLength >= 0 else {
            throw .truncated(needed: ATTConstants.authenticationSignatureLength, available: reader.remaining)
        }
        attributeValue = try reader.readBytes(valueLength)
        authenticationSignature = reader.readRemaining()
    }

    public func encode(into writer: inout ByteWriter) {
        writer.write(attributeHandle)
        writer.write(contentsOf: attributeValue)
        writer.write(contentsOf: authenticationSignature)
    }

    /// The bytes the signature covers: opcode, handle and value (Vol 3 Part F 3.4.5.4),
    /// for SMP to sign or verify.
    public var signedBytes: [UInt8] {
        var writer = ByteWriter(capacity: 3 + attributeValue.count)
        writer.write(Self.opcode.rawValue)
        writer.write(attributeHandle)
        writer.write(contentsOf: attributeValue)
        return writer.bytes
    }
}
