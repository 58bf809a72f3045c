import BluetoothCore

/// A command opcode: OGF in the top 6 bits, OCF in the low 10 (Core Vol 4 Part E 5.4.1).
public struct HCIOpcode: RawRepresentable, Hashable, Sendable, Comparable, CustomStringConvertible {
    public let rawValue: UInt16

    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public init(ogf: UInt8, ocf: UInt16) {
        rawValue = UInt16(ogf & 0x3F) << 10 | (ocf & 0x03FF)
    }

    public var ogf: UInt8 { UInt8(rawValue >> 10) }
    public var ocf: UInt16 { rawValue & 0x03FF }

    /// The command's specification name when BareBLE knows it, else "0xOGF|0xOCF".
    public var name: String {
        HCICommands.type(for: self)?.name ?? "opcode 0x\(Hex.string([UInt8(rawValue >> 8), UInt8(rawValue & 0xFF)])) (OGF 0x\(Hex.string([ogf])), OCF 0x\(String(ocf, radix: 16)))"
    }

    public var description: String { name }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    public enum Group {
        public static let linkControl: UInt8 = 0x01
        public static let controllerAndBaseband: UInt8 = 0x03
        public static let informational: UInt8 = 0x04
        public static let statusParameters: UInt8 = 0x05
        public static let le: UInt8 = 0x08
        public static let vendor: UInt8 = 0x3F
    }
}
