import BluetoothCore

/// The key records of the kernel's management interface (BlueZ doc/mgmt-api.txt), in the
/// one layout both directions share: the kernel reports a record in a New ... Key event
/// and takes the same record back in the matching Load command. Every record starts with
/// the peer's address (6, little endian) and its mgmt address type (1: LE public, 2: LE
/// random; 0, BR/EDR, is not ours and fails decoding).
public enum KernelKeys {
    /// A Long Term Key (mgmt_ltk_info, 36 octets).
    public struct LongTermKey: Sendable, Hashable {
        public var peer: DeviceAddress
        public var type: KeyType
        /// The legacy key we present as central (the peer distributed it); a legacy key
        /// with 0 is the one we answer with as peripheral. Secure Connections keys serve
        /// both roles and carry 0.
        public var central: Bool
        public var keySize: UInt8
        public var ediv: UInt16
        public var rand: UInt64
        /// The key, little endian as on the wire.
        public var value: [UInt8]

        public init(peer: DeviceAddress, type: KeyType, central: Bool, keySize: UInt8, ediv: UInt16, rand: UInt64, value: [UInt8]) {
            self.peer = peer
            self.type = type
            self.central = central
            self.keySize = keySize
            self.ediv = ediv
            self.rand = rand
            self.value = value
        }

        static let size = 36
    }

    /// Key_Type of a Long Term Key.
    public enum KeyType: UInt8, Sendable, Hashable {
        case unauthenticatedLegacy = 0x00
        case authenticatedLegacy = 0x01
        case unauthenticatedP256 = 0x02
        case authenticatedP256 = 0x03
        /// Made with the specification's debug P-256 key pair: anyone can derive it, and
        /// the kernel refuses it in Load Long Term Keys.
        case debugP256 = 0x04

        public var isAuthenticated: Bool { self == .authenticatedLegacy || self == .authenticatedP256 }
        public var isSecureConnections: Bool { rawValue >= KeyType.unauthenticatedP256.rawValue }
    }

    /// An Identity Resolving Key (mgmt_irk_info, 23 octets): the peer's identity address
    /// and the key its RPAs resolve with.
    public struct IdentityResolvingKey: Sendable, Hashable {
        public var peer: DeviceAddress
        public var value: [UInt8]

        public init(peer: DeviceAddress, value: [UInt8]) {
            self.peer = peer
            self.value = value
        }

        static let size = 23
    }

    /// A Connection Signature Resolving Key (mgmt_csrk_info, 24 octets).
    public struct SignatureKey: Sendable, Hashable {
        public var peer: DeviceAddress
        /// 0 unauthenticated local, 1 unauthenticated remote, 2 authenticated local, 3
        /// authenticated remote: bit 0 says whose key it is.
        public var type: UInt8
        public var value: [UInt8]

        public var isRemote: Bool { type & 1 == 1 }
        public var isAuthenticated: Bool { type & 2 == 2 }

        public init(peer: DeviceAddress, type: UInt8, value: [UInt8]) {
            self.peer = peer
            self.type = type
            self.value = value
        }
    }

    /// Connection parameters for a peer (mgmt_conn_param, 15 octets), in the units of LE
    /// Create Connection: intervals in 1.25 ms, timeout in 10 ms.
    public struct ConnectionParameters: Sendable, Hashable {
        public var peer: DeviceAddress
        public var minimumInterval: UInt16
        public var maximumInterval: UInt16
        public var latency: UInt16
        public var supervisionTimeout: UInt16

        public init(peer: DeviceAddress, minimumInterval: UInt16, maximumInterval: UInt16, latency: UInt16, supervisionTimeout: UInt16) {
            self.peer = peer
            self.minimumInterval = minimumInterval
            self.maximumInterval = maximumInterval
            self.latency = latency
            self.supervisionTimeout = supervisionTimeout
        }

        static let size = 15
    }

    // MARK: The shared layout

    static func readAddress(_ reader: inout ByteReader) throws(DecodeError) -> DeviceAddress {
        let address = try BluetoothAddress(littleEndian: try reader.readBytes(6))
        let type = try reader.readUInt8()
        switch type {
        case 1: return DeviceAddress(address, type: .public)
        case 2: return DeviceAddress(address, type: .random)
        default: throw .invalidValue(field: "mgmt address type", value: Int(type))
        }
    }

    static func write(_ peer: DeviceAddress, to writer: inout ByteWriter) {
        writer.write(contentsOf: peer.address.littleEndianBytes)
        writer.write(UInt8(peer.type.isRandom ? 2 : 1))
    }

    static func readKey(_ reader: inout ByteReader) throws(DecodeError) -> [UInt8] {
        try reader.readBytes(16)
    }
}

extension KernelKeys.LongTermKey {
    init(reading reader: inout ByteReader) throws(DecodeError) {
        peer = try KernelKeys.readAddress(&reader)
        let rawType = try reader.readUInt8()
        guard let type = KernelKeys.KeyType(rawValue: rawType) else { throw .invalidValue(field: "LTK key type", value: Int(rawType)) }
        self.type = type
        let central = try reader.readUInt8()
        guard central <= 1 else { throw .invalidValue(field: "LTK central", value: Int(central)) }
        self.central = central == 1
        keySize = try reader.readUInt8()
        guard (7...16).contains(keySize) else { throw .invalidValue(field: "LTK encryption size", value: Int(keySize)) }
        ediv = try reader.readUInt16()
        rand = try reader.readUInt64()
        value = try KernelKeys.readKey(&reader)
    }

    func write(to writer: inout ByteWriter) {
        KernelKeys.write(peer, to: &writer)
        writer.write(type.rawValue)
        writer.write(UInt8(central ? 1 : 0))
        writer.write(keySize)
        writer.write(ediv)
        writer.write(rand)
        writer.write(contentsOf: value)
    }
}

extension KernelKeys.IdentityResolvingKey {
    init(reading reader: inout ByteReader) throws(DecodeError) {
        peer = try KernelKeys.readAddress(&reader)
        value = try KernelKeys.readKey(&reader)
    }

    func write(to writer: inout ByteWriter) {
        KernelKeys.write(peer, to: &writer)
        writer.write(contentsOf: value)
    }
}

extension KernelKeys.SignatureKey {
    init(reading reader: inout ByteReader) throws(DecodeError) {
        peer = try KernelKeys.readAddress(&reader)
        type = try reader.readUInt8()
        guard type <= 3 else { throw .invalidValue(field: "CSRK type", value: Int(type)) }
        value = try KernelKeys.readKey(&reader)
    }
}

extension KernelKeys.ConnectionParameters {
    /// The parameters after the address (8 octets), as New Connection Parameter puts the
    /// Store_Hint between the two.
    init(peer: DeviceAddress, readingValues reader: inout ByteReader) throws(DecodeError) {
        self.peer = peer
        minimumInterval = try reader.readUInt16()
        maximumInterval = try reader.readUInt16()
        latency = try reader.readUInt16()
        supervisionTimeout = try reader.readUInt16()
    }

    func write(to writer: inout ByteWriter) {
        KernelKeys.write(peer, to: &writer)
        writeValues(to: &writer)
    }

    /// The four values alone (8 octets), as a bond store attachment keeps them.
    public func writeValues(to writer: inout ByteWriter) {
        writer.write(minimumInterval)
        writer.write(maximumInterval)
        writer.write(latency)
        writer.write(supervisionTimeout)
    }

    /// The four values alone, for `peer`: exactly 8 octets or nil.
    public init?(peer: DeviceAddress, values: [UInt8]) {
        guard values.count == 8 else { return nil }
        var reader = ByteReader(values)
        guard let parameters = try? Self(peer: peer, readingValues: &reader) else { return nil }
        self = parameters
    }
}
