import BluetoothCore

/// An HCI ACL data packet (Core Vol 4 Part E 5.4.2): a 12-bit handle, two 2-bit flags, a
/// 16-bit length and the data, which is an L2CAP fragment.
public struct ACLDataPacket: Sendable, Equatable {
    /// Packet_Boundary_Flag. All four values are defined, so the enum is total.
    public enum PacketBoundary: UInt8, Sendable, Hashable, CaseIterable {
        /// Host to controller only: the first fragment of a packet that must not be flushed
        /// (the only start value allowed on LE).
        case firstNonFlushable = 0b00
        case continuing = 0b01
        /// The first fragment of a packet; controller to host on LE uses this.
        case firstFlushable = 0b10
        /// A complete, automatically flushable L2CAP PDU (deprecated in the specification).
        case complete = 0b11
    }

    /// Broadcast_Flag. On LE always ``pointToPoint``; the reserved values are kept so a
    /// packet decodes and re-encodes unchanged whatever the controller sent.
    public enum BroadcastFlag: UInt8, Sendable, Hashable, CaseIterable {
        case pointToPoint = 0b00
        /// BR/EDR broadcast (active peripheral broadcast).
        case brEdrBroadcast = 0b01
        case reserved0b10 = 0b10
        case reserved0b11 = 0b11
    }

    /// 12 bits; higher bits are dropped on encode.
    public var connectionHandle: UInt16
    public var packetBoundary: PacketBoundary
    public var broadcast: BroadcastFlag
    /// At most 65535 bytes fit Data_Total_Length.
    public var data: [UInt8]

    public init(connectionHandle: UInt16, packetBoundary: PacketBoundary, broadcast: BroadcastFlag = .pointToPoint, data: [UInt8]) {
        self.connectionHandle = connectionHandle & connectionHandleMask
        self.packetBoundary = packetBoundary
        self.broadcast = broadcast
        self.data = data
    }

    static let headerSize = 4

    /// Decodes `HCIPacket.bytes` of an ACL packet; Data_Total_Length must equal the data
    /// bytes present.
    public init(decoding packet: [UInt8]) throws(DecodeError) {
        var reader = ByteReader(packet)
        let header = try reader.readUInt16()
        let length = Int(try reader.readUInt16())
        guard length == reader.remaining else {
            throw .lengthMismatch(declared: length, actual: reader.remaining)
        }
        connectionHandle = header & connectionHandleMask
        // Two-bit fields: every value maps to a case, so these never fail.
        packetBoundary = PacketBoundary(rawValue: UInt8(header >> 12 & 0b11)) ?? .continuing
        broadcast = BroadcastFlag(rawValue: UInt8(header >> 14 & 0b11)) ?? .pointToPoint
        data = reader.readRemaining()
    }

    /// The data encoded: all of it, up to the 65535 octets Data_Total_Length can count.
    var encodedData: ArraySlice<UInt8> { data.prefix(Int(UInt16.max)) }

    /// The 4-octet header of the encoded packet: handle and flags, then Data_Total_Length
    /// of ``encodedData``, both little endian.
    var header: (UInt8, UInt8, UInt8, UInt8) {
        let field = connectionHandle & connectionHandleMask
            | UInt16(packetBoundary.rawValue) << 12
            | UInt16(broadcast.rawValue) << 14
        let length = UInt16(encodedData.count)
        return (UInt8(truncatingIfNeeded: field), UInt8(field >> 8), UInt8(truncatingIfNeeded: length), UInt8(length >> 8))
    }

    /// The packet: ``header``, then ``encodedData``.
    public func encode() -> [UInt8] {
        let body = encodedData
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Self.headerSize + body.count)
        withUnsafeBytes(of: header) { bytes += $0 }
        bytes += body
        return bytes
    }
}
