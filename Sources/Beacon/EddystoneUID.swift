import BluetoothCore

/// Eddystone-UID (frame type 0x00): a 10-octet namespace (an organisation; often the
/// first 10 octets of a SHA-1 of its domain or a truncated UUID) and a 6-octet instance
/// within it.
public struct EddystoneUID: Sendable, Hashable, CustomStringConvertible {
    public static let frameType: UInt8 = 0x00
    public static let namespaceLength = 10
    public static let instanceLength = 6

    /// Calibrated TX power in dBm as received at 0 m.
    public var txPower: Int8
    public var namespace: [UInt8]
    public var instance: [UInt8]

    /// Checked: namespace 10 octets, instance 6, TX power -127...20 dBm.
    public init(txPower: Int, namespace: [UInt8], instance: [UInt8]) throws(BeaconEncodingError) {
        guard namespace.count == Self.namespaceLength else {
            throw .wrongIdentifierLength(field: "Eddystone namespace", expected: Self.namespaceLength, actual: namespace.count)
        }
        guard instance.count == Self.instanceLength else {
            throw .wrongIdentifierLength(field: "Eddystone instance", expected: Self.instanceLength, actual: instance.count)
        }
        self.txPower = try checkedPower(txPower, field: "TX power")
        self.namespace = namespace
        self.instance = instance
    }

    private init(unchecked txPower: Int8, namespace: [UInt8], instance: [UInt8]) {
        self.txPower = txPower
        self.namespace = namespace
        self.instance = instance
    }

    /// The service data after the UUID: type, power, namespace, instance, two reserved
    /// octets that must be zero.
    public var frameBytes: [UInt8] {
        [Self.frameType, UInt8(bitPattern: txPower)] + namespace + instance + [0, 0]
    }

    /// Decodes the service data after 0xFEAA whose first octet is 0x00. The reserved
    /// octets are accepted whatever their value and may be missing (18 octets): early
    /// transmitters left them out, and neither affects what the frame identifies.
    static func decode(frame data: [UInt8]) -> BeaconDecoding<EddystoneUID> {
        guard data.count == 18 || data.count == 20 else {
            return .malformed(.wrongLength(frame: "Eddystone-UID", expected: 18...20, actual: data.count))
        }
        return .frame(EddystoneUID(unchecked: Int8(bitPattern: data[1]), namespace: Array(data[2..<12]), instance: Array(data[12..<18])))
    }

    public var description: String {
        "Eddystone-UID \(Hex.string(namespace))/\(Hex.string(instance)) TX power \(txPower) dBm at 0 m"
    }
}

/// Eddystone-EID (frame type 0x30): an 8-octet ephemeral identifier that rotates; only the
/// registered resolver can map it to a beacon. Kept as received.
public struct EddystoneEID: Sendable, Hashable, CustomStringConvertible {
    public static let frameType: UInt8 = 0x30
    public static let identifierLength = 8

    /// Calibrated TX power in dBm as received at 0 m.
    public var txPower: Int8
    public var ephemeralIdentifier: [UInt8]

    public init(txPower: Int, ephemeralIdentifier: [UInt8]) throws(BeaconEncodingError) {
        guard ephemeralIdentifier.count == Self.identifierLength else {
            throw .wrongIdentifierLength(field: "Eddystone ephemeral identifier", expected: Self.identifierLength, actual: ephemeralIdentifier.count)
        }
        self.txPower = try checkedPower(txPower, field: "TX power")
        self.ephemeralIdentifier = ephemeralIdentifier
    }

    private init(unchecked txPower: Int8, ephemeralIdentifier: [UInt8]) {
        self.txPower = txPower
        self.ephemeralIdentifier = ephemeralIdentifier
    }

    public var frameBytes: [UInt8] { [Self.frameType, UInt8(bitPattern: txPower)] + ephemeralIdentifier }

    static func decode(frame data: [UInt8]) -> BeaconDecoding<EddystoneEID> {
        guard data.count == 10 else {
            return .malformed(.wrongLength(frame: "Eddystone-EID", expected: 10...10, actual: data.count))
        }
        return .frame(EddystoneEID(unchecked: Int8(bitPattern: data[1]), ephemeralIdentifier: Array(data[2..<10])))
    }

    public var description: String { "Eddystone-EID \(Hex.string(ephemeralIdentifier)) TX power \(txPower) dBm at 0 m" }
}
