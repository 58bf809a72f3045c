/// The HCI packet indicator (Core Vol 4 Part A 2): the first byte of every H4 frame.
public enum HCIPacketType: UInt8, Sendable, Hashable, CaseIterable {
    case command = 0x01
    case acl = 0x02
    case sco = 0x03
    case event = 0x04
    case iso = 0x05
}

/// One HCI packet, without its H4 indicator byte: `bytes` starts at the packet header
/// (opcode for commands, event code for events, handle for ACL/SCO/ISO).
public struct HCIPacket: Sendable, Hashable {
    public var type: HCIPacketType
    public var bytes: [UInt8]

    public init(_ type: HCIPacketType, _ bytes: [UInt8]) {
        self.type = type
        self.bytes = bytes
    }

    /// The H4 frame: indicator byte, then the packet.
    public var h4Bytes: [UInt8] { [type.rawValue] + bytes }
}

/// Which way a packet crossed the HCI.
public enum PacketDirection: Sendable, Hashable {
    case hostToController
    case controllerToHost
}
