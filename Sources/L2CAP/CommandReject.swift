import BluetoothCore

/// L2CAP_COMMAND_REJECT_RSP (Core Vol 3 Part A 4.1): why a command was not processed.
public enum CommandReject: SignalingCommandData, CustomStringConvertible {
    public static let code = SignalingCode.commandReject

    /// Reason 0x0000: the command code is unknown or not valid here.
    case commandNotUnderstood
    /// Reason 0x0001: the command exceeded the signaling MTU; carries ours.
    case signalingMTUExceeded(actualMTU: UInt16)
    /// Reason 0x0002: the request named a channel that does not exist. Endpoints are
    /// relative to the sender of the reject.
    case invalidCIDInRequest(localCID: ChannelIdentifier, remoteCID: ChannelIdentifier)
    /// A reason this specification version does not define, with its data kept.
    case other(reason: UInt16, data: [UInt8])

    public enum Reason {
        public static let commandNotUnderstood: UInt16 = 0x0000
        public static let signalingMTUExceeded: UInt16 = 0x0001
        public static let invalidCIDInRequest: UInt16 = 0x0002
    }

    public init(decoding data: [UInt8]) throws(DecodeError) {
        var reader = ByteReader(data)
        let reason = try reader.readUInt16()
        switch reason {
        case Reason.commandNotUnderstood:
            self = .commandNotUnderstood
        case Reason.signalingMTUExceeded:
            self = .signalingMTUExceeded(actualMTU: try reader.readUInt16())
        case Reason.invalidCIDInRequest:
            self = .invalidCIDInRequest(
                localCID: ChannelIdentifier(rawValue: try reader.readUInt16()),
                remoteCID: ChannelIdentifier(rawValue: try reader.readUInt16())
            )
        default:
            self = .other(reason: reason, data: reader.readRemaining())
        }
        try reader.expectEnd()
    }

    public func encode() -> [UInt8] {
        var writer = ByteWriter(capacity: 6)
        switch self {
        case .commandNotUnderstood:
            writer.write(Reason.commandNotUnderstood)
        case .signalingMTUExceeded(let mtu):
            writer.write(Reason.signalingMTUExceeded)
            writer.write(mtu)
        case .invalidCIDInRequest(let local, let remote):
            writer.write(Reason.invalidCIDInRequest)
            writer.write(local.rawValue)
            writer.write(remote.rawValue)
        case .other(let reason, let data):
            writer.write(reason)
            writer.write(contentsOf: data)
        }
        return writer.bytes
    }

    public var description: String {
        switch self {
        case .commandNotUnderstood: "command not understood"
        case .signalingMTUExceeded(let mtu): "signaling MTU exceeded (MTU \(mtu))"
        case .invalidCIDInRequest(let local, let remote): "invalid CID in request (local \(local), remote \(remote))"
        case .other(let reason, _): "reject reason 0x\(Hex.string([UInt8(reason >> 8), UInt8(reason & 0xFF)]))"
        }
    }
}
