import BluetoothCore

/// The parameters of one HCI event type, declared once: its event code and both directions.
///
/// `init(decoding:)` reads from a reader bounded to the event's parameters and must consume
/// all of them; ``HCIEvent`` rejects bytes left over.
public protocol HCIEventParameters: Sendable, Equatable {
    static var eventCode: UInt8 { get }
    init(decoding reader: inout ByteReader) throws(DecodeError)
    func encode(into writer: inout ByteWriter)
}

/// An HCI event packet from the controller (Core Vol 4 Part E 5.4.4 and 7.7), typed.
///
/// Only the events a BLE host acts on are modelled; every other event code decodes to
/// ``unknown(code:parameters:)`` with its bytes kept, because an event the host does not
/// understand must never stop the stack. A modelled event whose parameters are malformed
/// throws a ``DecodeError``.
public enum HCIEvent: Sendable, Equatable {
    /// 0x0E
    case commandComplete(CommandComplete)
    /// 0x0F
    case commandStatus(CommandStatus)
    /// 0x05
    case disconnectionComplete(DisconnectionComplete)
    /// 0x08 (v1) or 0x59 (v2, with the key size)
    case encryptionChange(EncryptionChange)
    /// 0x30
    case encryptionKeyRefreshComplete(EncryptionKeyRefreshComplete)
    /// 0x13
    case numberOfCompletedPackets(NumberOfCompletedPackets)
    /// 0x10
    case hardwareError(HardwareError)
    /// 0x1A
    case dataBufferOverflow(DataBufferOverflow)
    /// 0x3E
    case le(LEMetaEvent)
    case unknown(code: UInt8, parameters: [UInt8])

    /// The event codes this enum models (Core Vol 4 Part E 7.7).
    public enum Code {
        public static let disconnectionComplete: UInt8 = 0x05
        public static let encryptionChangeV1: UInt8 = 0x08
        public static let commandComplete: UInt8 = 0x0E
        public static let commandStatus: UInt8 = 0x0F
        public static let hardwareError: UInt8 = 0x10
        public static let numberOfCompletedPackets: UInt8 = 0x13
        public static let dataBufferOverflow: UInt8 = 0x1A
        public static let encryptionKeyRefreshComplete: UInt8 = 0x30
        public static let leMeta: UInt8 = 0x3E
        public static let encryptionChangeV2: UInt8 = 0x59
    }

    /// Decodes one event packet: event code, parameter length, parameters (what
    /// `HCIPacket.bytes` holds for an event). The length byte must match the bytes present.
    public init(decoding packet: [UInt8]) throws(DecodeError) {
        guard packet.count >= 2 else { throw .truncated(needed: 2, available: packet.count) }
        let declared = Int(packet[1])
        guard declared == packet.count - 2 else {
            throw .lengthMismatch(declared: declared, actual: packet.count - 2)
        }
        let code = packet[0]
        var reader = ByteReader(packet, range: 2..<packet.count)
        switch code {
        case Code.commandComplete: self = .commandComplete(try CommandComplete(decoding: &reader))
        case Code.commandStatus: self = .commandStatus(try CommandStatus(decoding: &reader))
        case Code.disconnectionComplete:
            self = .disconnectionComplete(try DisconnectionComplete(decoding: &reader))
        case Code.encryptionChangeV1:
            self = .encryptionChange(try EncryptionChange(decoding: &reader, withKeySize: false))
        case Code.encryptionChangeV2:
            self = .encryptionChange(try EncryptionChange(decoding: &reader, withKeySize: true))
        case Code.encryptionKeyRefreshComplete:
            self = .encryptionKeyRefreshComplete(try EncryptionKeyRefreshComplete(decoding: &reader))
        case Code.numberOfCompletedPackets:
            self = .numberOfCompletedPackets(try NumberOfCompletedPackets(decoding: &reader))
        case Code.hardwareError: self = .hardwareError(try HardwareError(decoding: &reader))
        case Code.dataBufferOverflow: self = .dataBufferOverflow(try DataBufferOverflow(decoding: &reader))
        case Code.leMeta: self = .le(try LEMetaEvent(decoding: &reader))
        default: self = .unknown(code: code, parameters: reader.readRemaining())
        }
        try reader.expectEnd()
    }

    /// The event code this value encodes with.
    public var code: UInt8 {
        switch self {
        case .commandComplete: Code.commandComplete
        case .commandStatus: Code.commandStatus
        case .disconnectionComplete: Code.disconnectionComplete
        case .encryptionChange(let event): event.eventCode
        case .encryptionKeyRefreshComplete: Code.encryptionKeyRefreshComplete
        case .numberOfCompletedPackets: Code.numberOfCompletedPackets
        case .hardwareError: Code.hardwareError
        case .dataBufferOverflow: Code.dataBufferOverflow
        case .le: Code.leMeta
        case .unknown(let code, _): code
        }
    }

    /// The event packet: code, parameter length, parameters.
    ///
    /// The length is one byte, so parameters longer than 255 bytes (possible only for values
    /// built by hand, never for decoded ones) cannot be represented and are cut to 255.
    public func encode() -> [UInt8] {
        var parameters = ByteWriter(capacity: 64)
        switch self {
        case .commandComplete(let event): event.encode(into: &parameters)
        case .commandStatus(let event): event.encode(into: &parameters)
        case .disconnectionComplete(let event): event.encode(into: &parameters)
        case .encryptionChange(let event): event.encode(into: &parameters)
        case .encryptionKeyRefreshComplete(let event): event.encode(into: &parameters)
        case .numberOfCompletedPackets(let event): event.encode(into: &parameters)
        case .hardwareError(let event): event.encode(into: &parameters)
        case .dataBufferOverflow(let event): event.encode(into: &parameters)
        case .le(let event): event.encode(into: &parameters)
        case .unknown(_, let bytes): parameters.write(contentsOf: bytes)
        }
        let body = parameters.bytes.prefix(255)
        var writer = ByteWriter(capacity: 2 + body.count)
        writer.write(code)
        writer.write(UInt8(body.count))
        writer.write(contentsOf: body)
        return writer.bytes
    }
}
