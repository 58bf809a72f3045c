import BluetoothCore

/// The return parameters of the many commands whose Command Complete echoes only the
/// Connection_Handle they acted on (LE Set Data Length, LE Long Term Key Request Reply, ...).
/// The driver matches the echo against the handle it sent.
public struct ConnectionHandleReturnParameters: HCIReturnParameters, Equatable {
    public let connectionHandle: UInt16

    public init(connectionHandle: UInt16) { self.connectionHandle = connectionHandle }

    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        connectionHandle = try reader.readUInt16()
        try reader.expectEnd()
    }

    public func encode(into writer: inout ByteWriter) {
        writer.write(connectionHandle)
    }
}
