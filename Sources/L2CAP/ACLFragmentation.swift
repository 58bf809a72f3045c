import HCI

/// Splits one B-frame into ACL packets no longer than the controller's ACL data length
/// (Core Vol 3 Part A 7.2.1; Vol 4 Part E 5.4.2).
///
/// On LE the first fragment must carry Packet_Boundary_Flag 0b00 (first non-automatically-
/// flushable), every following one 0b01 (continuing).
public enum ACLFragmentation {
    /// The fragments of `frame`; `maximumLength` is clamped to at least one byte.
    public static func fragments(of frame: BasicFrame, connectionHandle: UInt16, maximumLength: Int) -> [ACLDataPacket] {
        let bytes = frame.encode()
        let size = max(1, maximumLength)
        var packets: [ACLDataPacket] = []
        packets.reserveCapacity((bytes.count + size - 1) / size)
        var offset = 0
        while offset < bytes.count {
            let end = min(bytes.count, offset + size)
            packets.append(ACLDataPacket(
                connectionHandle: connectionHandle,
                packetBoundary: offset == 0 ? .firstNonFlushable : .continuing,
                broadcast: .pointToPoint,
                data: Array(bytes[offset..<end])
            ))
            offset = end
        }
        return packets
    }
}
