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
        return stride(from: 0, to: bytes.count, by: max(1, maximumLength)).map {
            fragment(of: bytes, at: $0, connectionHandle: connectionHandle, maximumLength: maximumLength)
        }
    }

    /// The fragment of the encoded B-frame `bytes` that starts at `offset` (a multiple of
    /// `maximumLength`, clamped as above, below `bytes.count`). A frame that fits one
    /// packet is the packet's data as it is, not a copy.
    public static func fragment(of bytes: [UInt8], at offset: Int, connectionHandle: UInt16, maximumLength: Int) -> ACLDataPacket {
        let end = min(bytes.count, offset + max(1, maximumLength))
        return ACLDataPacket(
            connectionHandle: connectionHandle,
            packetBoundary: offset == 0 ? .firstNonFlushable : .continuing,
            broadcast: .pointToPoint,
            data: offset == 0 && end == bytes.count ? bytes : Array(bytes[offset..<end])
        )
    }
}
