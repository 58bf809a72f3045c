import BluetoothCore

/// L2CAP_DISCONNECTION_REQ (Core Vol 3 Part A 4.6). On LE it only closes credit-based
/// channels, which BareBLE does not open, so it is decoded only to name the channel in the
/// Command Reject "invalid CID in request" that answers it.
public struct DisconnectionRequest: SignalingCommandData {
    public static let code = SignalingCode.disconnectionRequest

    /// The channel on the receiver's side.
    public var destinationCID: ChannelIdentifier
    /// The channel on the sender's side.
    public var sourceCID: ChannelIdentifier

    public init(destinationCID: ChannelIdentifier, sourceCID: ChannelIdentifier) {
        self.destinationCID = destinationCID
        self.sourceCID = sourceCID
    }

    public init(decoding data: [UInt8]) throws(DecodeError) {
        var reader = ByteReader(data)
        destinationCID = ChannelIdentifier(rawValue: try reader.readUInt16())
        sourceCID = ChannelIdentifier(rawValue: try reader.readUInt16())
        try reader.expectEnd()
    }

    public func encode() -> [UInt8] {
        var writer = ByteWriter(capacity: 4)
        writer.write(destinationCID.rawValue)
        writer.write(sourceCID.rawValue)
        return writer.bytes
    }
}
