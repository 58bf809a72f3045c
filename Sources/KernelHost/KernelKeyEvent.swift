import BluetoothCore

/// A key the kernel made or learned and reports on the management channel, for user space
/// to keep (mgmt-api.txt: New Long Term Key 0x000A, New Identity Resolving Key 0x0018,
/// New CSRK 0x0019, New Connection Parameter 0x001C). Without a daemon to keep them the
/// kernel holds keys in memory only.
public enum KernelKeyEvent: Sendable, Hashable {
    case longTermKey(KernelKeys.LongTermKey)
    /// The peer's IRK, and the RPA it was connected from (zero when it used its identity).
    case identityResolvingKey(KernelKeys.IdentityResolvingKey, resolvablePrivateAddress: BluetoothAddress)
    case signatureKey(KernelKeys.SignatureKey)
    case connectionParameters(KernelKeys.ConnectionParameters)

    enum Code {
        static let newLongTermKey: UInt16 = 0x000A
        static let newIdentityResolvingKey: UInt16 = 0x0018
        static let newSignatureKey: UInt16 = 0x0019
        static let newConnectionParameter: UInt16 = 0x001C
    }

    /// One event read from the control channel, and whether the kernel asks for it to be
    /// kept (Store_Hint: 0 for a pairing without bonding, or a peer whose address will
    /// change).
    public struct Received: Sendable, Hashable {
        public var index: UInt16
        public var event: KernelKeyEvent
        public var persistent: Bool
    }

    /// Decodes one management event: nil for an event that carries no key (the channel
    /// carries every event of every adapter), a typed error for a key event whose length
    /// or fields are wrong. The header's length must be the datagram's; the parameters
    /// must hold the event's whole layout (a longer one from a newer kernel is read up to
    /// it).
    public static func decode(_ bytes: [UInt8]) throws(DecodeError) -> Received? {
        var reader = ByteReader(bytes)
        let code = try reader.readUInt16()
        let index = try reader.readUInt16()
        let length = Int(try reader.readUInt16())
        guard length == reader.remaining else { throw .lengthMismatch(declared: length, actual: reader.remaining) }
        let event: KernelKeyEvent
        let hint: UInt8
        switch code {
        case Code.newLongTermKey:
            // Store_Hint (1), then the key record.
            hint = try reader.readUInt8()
            event = .longTermKey(try KernelKeys.LongTermKey(reading: &reader))
        case Code.newIdentityResolvingKey:
            // Store_Hint (1), the RPA (6), then the key record.
            hint = try reader.readUInt8()
            let rpa = try BluetoothAddress(littleEndian: try reader.readBytes(6))
            event = .identityResolvingKey(try KernelKeys.IdentityResolvingKey(reading: &reader), resolvablePrivateAddress: rpa)
        case Code.newSignatureKey:
            hint = try reader.readUInt8()
            event = .signatureKey(try KernelKeys.SignatureKey(reading: &reader))
        case Code.newConnectionParameter:
            // The address first, then Store_Hint, then the four values.
            let peer = try KernelKeys.readAddress(&reader)
            hint = try reader.readUInt8()
            event = .connectionParameters(try KernelKeys.ConnectionParameters(peer: peer, readingValues: &reader))
        default:
            return nil
        }
        guard hint <= 1 else { throw .invalidValue(field: "Store_Hint", value: Int(hint)) }
        return Received(index: index, event: event, persistent: hint == 1)
    }
}
