import BluetoothCore

// Link Control commands (OGF 0x01, Core Vol 4 Part E 7.1) that apply to LE connections.
// Both finish with an event, so the controller answers them with Command Status.

/// Disconnect (7.1.6); finishes with Disconnection Complete.
public struct Disconnect: HCICommand, Equatable {
    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.linkControl, ocf: 0x0006)
    public static let name = "Disconnect"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (0, 5) }
    public static var completesWithStatus: Bool { true }

    public let connectionHandle: UInt16
    /// The reason the peer is told (usually Remote User Terminated Connection). Any code
    /// decodes: the controller, not the host, decides which codes it allows.
    public let reason: HCIErrorCode

    public init(connectionHandle: UInt16, reason: HCIErrorCode = .remoteUserTerminatedConnection) {
        self.connectionHandle = connectionHandle
        self.reason = reason
    }

    public init(parameters reader: inout ByteReader) throws(DecodeError) {
        connectionHandle = try reader.readUInt16()
        reason = try reader.readErrorCode()
        try reader.expectEnd()
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.write(connectionHandle)
        writer.write(reason)
    }
}

/// Read Remote Version Information (7.1.23); finishes with Read Remote Version Information
/// Complete.
public struct ReadRemoteVersionInformation: ConnectionHandleCommand, Equatable {
    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.linkControl, ocf: 0x001D)
    public static let name = "Read Remote Version Information"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (2, 7) }
    public static var completesWithStatus: Bool { true }

    public let connectionHandle: UInt16

    public init(connectionHandle: UInt16) { self.connectionHandle = connectionHandle }
}
