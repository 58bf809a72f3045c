import BluetoothCore

/// Error Response (0x01, Core 5.4 Vol 3 Part F 3.4.1.1): the server could not perform a
/// request. Never sent for a command, an indication's confirmation or another response.
public struct ErrorResponse: ATTPDUParameters, Hashable {
    public static let opcode = ATTOpcode.errorResponse

    /// The opcode of the request that failed.
    public var requestOpcodeInError: ATTOpcode
    /// The handle the request failed at, or 0x0000 when none applies.
    public var attributeHandleInError: UInt16
    public var errorCode: ATTErrorCode

    public init(requestOpcodeInError: ATTOpcode, attributeHandleInError: UInt16, errorCode: ATTErrorCode) {
        self.requestOpcodeInError = requestOpcodeInError
        self.attributeHandleInError = attributeHandleInError
        self.errorCode = errorCode
    }

    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        requestOpcodeInError = ATTOpcode(rawValue: try reader.readUInt8())
        attributeHandleInError = try reader.readUInt16()
        errorCode = ATTErrorCode(rawValue: try reader.readUInt8())
    }

    public func encode(into writer: inout ByteWriter) {
        writer.write(requestOpcodeInError.rawValue)
        writer.write(attributeHandleInError)
        writer.write(errorCode.rawValue)
    }
}
