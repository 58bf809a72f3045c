import BluetoothCore

/// The basic L2CAP header (Core Vol 3 Part A 3.1): the payload's length, then the
/// destination channel. Every fixed channel on LE-U carries B-frames.
public struct BasicFrameHeader: Sendable, Equatable {
    public static let size = 4

    /// Length of the information payload, header excluded.
    public var length: UInt16
    public var channelID: ChannelIdentifier

    public init(length: UInt16, channelID: ChannelIdentifier) {
        self.length = length
        self.channelID = channelID
    }

    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        length = try reader.readUInt16()
        channelID = ChannelIdentifier(rawValue: try reader.readUInt16())
    }

    public func encode(into writer: inout ByteWriter) {
        writer.write(length)
        writer.write(channelID.rawValue)
    }
}

/// A basic information frame (B-frame): header and payload, whole (after reassembly or
/// before fragmentation).
public struct BasicFrame: Sendable, Equatable {
    /// The header's 16-bit length field bounds every B-frame payload.
    public static let maximumPayloadLength = Int(UInt16.max)

    public var channelID: ChannelIdentifier
    public var payload: [UInt8]

    public init(channelID: ChannelIdentifier, payload: [UInt8]) {
        self.channelID = channelID
        self.payload = payload
    }

    /// Decodes one whole B-frame; the length field must equal the payload bytes present.
    public init(decoding bytes: [UInt8]) throws(DecodeError) {
        var reader = ByteReader(bytes)
        let header = try BasicFrameHeader(decoding: &reader)
        guard Int(header.length) == reader.remaining else {
            throw .lengthMismatch(declared: Int(header.length), actual: reader.remaining)
        }
        channelID = header.channelID
        payload = reader.readRemaining()
    }

    /// Header and payload. Callers check ``maximumPayloadLength`` first; a longer payload
    /// is cut there rather than given a length field that lies.
    public func encode() -> [UInt8] {
        let body = payload.prefix(Self.maximumPayloadLength)
        var writer = ByteWriter(capacity: BasicFrameHeader.size + body.count)
        BasicFrameHeader(length: UInt16(body.count), channelID: channelID).encode(into: &writer)
        writer.write(contentsOf: body)
        return writer.bytes
    }
}
