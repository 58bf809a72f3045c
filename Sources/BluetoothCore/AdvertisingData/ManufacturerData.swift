/// A Manufacturer Specific Data AD structure: a company identifier from the Assigned
/// Numbers and data that company defines (Core Specification Supplement Part A 1.4).
public struct ManufacturerData: Hashable, Sendable, CustomStringConvertible {
    /// The company identifier, carried little-endian in the first two octets (0x004C for
    /// Apple, 0xFFFF for tests and internal use).
    public var companyID: UInt16
    /// The bytes after the company identifier, zero-based.
    public var data: [UInt8]

    public init(companyID: UInt16, data: [UInt8]) {
        self.companyID = companyID
        self.data = data
    }

    /// The registered name of ``companyID`` ("Apple, Inc."), or nil when unassigned.
    public var companyName: String? { CompanyIdentifiers.name(for: companyID) }

    public var description: String {
        let id = "0x" + Hex.string([UInt8(companyID >> 8), UInt8(companyID & 0xFF)])
        return "\(companyName.map { "\($0) (\(id))" } ?? id): \(Hex.string(data))"
    }
}
