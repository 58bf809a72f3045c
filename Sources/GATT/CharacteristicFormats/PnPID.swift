import BluetoothCore

/// The PnP ID characteristic (0x2A50, Device Information Service 3.9): who made the
/// device and which product and version it is, as USB and Bluetooth device IDs say it.
public struct PnPID: Hashable, Sendable, CustomStringConvertible {
    /// Which registry ``vendorID`` comes from.
    public enum VendorIDSource: Hashable, Sendable, CustomStringConvertible {
        /// A Bluetooth SIG company identifier.
        case bluetoothSIG
        /// A USB Implementers Forum vendor ID.
        case usbImplementersForum
        /// 0 and 3 to 255 are reserved: kept, so the rest of the value still shows.
        case reserved(UInt8)

        public init(rawValue: UInt8) {
            switch rawValue {
            case 1: self = .bluetoothSIG
            case 2: self = .usbImplementersForum
            default: self = .reserved(rawValue)
            }
        }

        public var rawValue: UInt8 {
            switch self {
            case .bluetoothSIG: 1
            case .usbImplementersForum: 2
            case .reserved(let value): value
            }
        }

        public var description: String {
            switch self {
            case .bluetoothSIG: "Bluetooth SIG"
            case .usbImplementersForum: "USB Implementers Forum"
            case .reserved(let value): "reserved source 0x\(hex8(value))"
            }
        }
    }

    public var vendorIDSource: VendorIDSource
    public var vendorID: UInt16
    public var productID: UInt16
    /// 0xJJMN: major JJ, minor M, sub-minor N.
    public var productVersion: UInt16

    public init(vendorIDSource: VendorIDSource, vendorID: UInt16, productID: UInt16, productVersion: UInt16) {
        self.vendorIDSource = vendorIDSource
        self.vendorID = vendorID
        self.productID = productID
        self.productVersion = productVersion
    }

    /// Exactly seven bytes.
    public init(bytes: [UInt8]) throws(DecodeError) {
        var reader = ByteReader(bytes)
        let source = VendorIDSource(rawValue: try reader.readUInt8())
        let vendor = try reader.readUInt16()
        let product = try reader.readUInt16()
        let version = try reader.readUInt16()
        try reader.expectEnd()
        self.init(vendorIDSource: source, vendorID: vendor, productID: product, productVersion: version)
    }

    public var bytes: [UInt8] {
        var writer = ByteWriter(capacity: 7)
        writer.write(vendorIDSource.rawValue)
        writer.write(vendorID)
        writer.write(productID)
        writer.write(productVersion)
        return writer.bytes
    }

    /// The company's registered name when the source is the Bluetooth SIG.
    public var vendorName: String? {
        vendorIDSource == .bluetoothSIG ? CompanyIdentifiers.name(for: vendorID) : nil
    }

    /// "1.1.0" for 0x0110.
    public var productVersionText: String {
        "\(productVersion >> 8).\(productVersion >> 4 & 0x0F).\(productVersion & 0x0F)"
    }

    /// "Bluetooth SIG vendor 0x000D (Texas Instruments Inc.), product 0x0000, version 1.1.0".
    public var description: String {
        let name = vendorName.map { " (\($0))" } ?? ""
        return "\(vendorIDSource) vendor 0x\(hex16(vendorID))\(name), product 0x\(hex16(productID)), version \(productVersionText)"
    }
}
