import BluetoothCore

// Commands that act on one connection and carry nothing but its Connection_Handle, in one
// direction or both. The handle goes on the wire as two octets as given: unlike events,
// commands do not mask the reserved top bits, so a command decodes to exactly what was sent.

/// A command whose only parameter is the Connection_Handle it acts on (Read Remote Version
/// Information, LE Read Remote Features, LE Read PHY, Read RSSI, LE Long Term Key Request
/// Negative Reply). Conforming supplies the parameter coding; the command declares only its
/// opcode, name and return parameters.
public protocol ConnectionHandleCommand: HCICommand {
    var connectionHandle: UInt16 { get }
    init(connectionHandle: UInt16)
}

extension ConnectionHandleCommand {
    public init(parameters reader: inout ByteReader) throws(DecodeError) {
        self.init(connectionHandle: try reader.readUInt16())
        try reader.expectEnd()
    }

    public func encodeParameters(into writer: inout ByteWriter) { writer.write(connectionHandle) }
}

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
