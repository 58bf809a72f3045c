/// A Service Data AD structure: a service UUID and the data that service puts in
/// advertisements (Core Specification Supplement Part A 1.11), e.g. Eddystone frames on
/// 0xFEAA.
public struct ServiceData: Hashable, Sendable, CustomStringConvertible {
    public var uuid: BluetoothUUID
    /// The bytes after the UUID, zero-based.
    public var data: [UInt8]

    public init(uuid: BluetoothUUID, data: [UInt8]) {
        self.uuid = uuid
        self.data = data
    }

    public var description: String { "\(uuid): \(Hex.string(data))" }
}
