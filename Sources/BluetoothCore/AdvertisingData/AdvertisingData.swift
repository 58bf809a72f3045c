/// Advertising or scan response data: a sequence of AD structures, each a length octet, an
/// AD type octet and data (Core Vol 3 Part C 11; Core Specification Supplement Part A).
///
/// SKELETON: the parsed accessors below are the contract; the full codec replaces this file.
public struct AdvertisingData: Sendable, Hashable {
    /// The bytes as received (or built), including anything malformed.
    public let bytes: [UInt8]

    /// Parses `bytes`. Never fails: structures that are well formed are available, and
    /// ``malformation`` says what was not.
    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    public static let empty = AdvertisingData([])

    /// Service UUIDs from every complete or incomplete 16-, 32- and 128-bit list.
    public var serviceUUIDs: [BluetoothUUID] { [] }

    /// The complete local name, else the shortened one.
    public var localName: String? { nil }
}
