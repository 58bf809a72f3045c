import BluetoothCore

/// The Supported_Commands bitmask a controller returns to Read Local Supported Commands
/// (Core Vol 4 Part E 6.27): 64 octets, one bit per command.
///
/// Commands declare their own bit (``HCICommand/supportedCommandBit``), so this type needs no
/// table of its own and a command added to the catalogue is looked up automatically.
public struct SupportedCommands: Hashable, Sendable {
    /// The field is always 64 octets long.
    public static let length = 64

    /// The 64 octets as the controller sent them.
    public let octets: [UInt8]

    /// Throws unless `octets` is exactly 64 octets.
    public init(octets: [UInt8]) throws(DecodeError) {
        guard octets.count == Self.length else {
            throw .lengthMismatch(declared: Self.length, actual: octets.count)
        }
        self.octets = octets
    }

    /// A table with exactly the given commands' bits set (commands without a bit are ignored).
    public init(commands: [any HCICommand.Type]) {
        var octets = [UInt8](repeating: 0, count: Self.length)
        for command in commands {
            guard let position = command.supportedCommandBit, Self.isValid(position) else { continue }
            octets[position.octet] |= 1 << UInt8(position.bit)
        }
        self.octets = octets
    }

    /// Reads the 64 octets and leaves the reader after them (the caller checks the end).
    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        octets = try reader.readBytes(Self.length)
    }

    public func encode(into writer: inout ByteWriter) { writer.write(contentsOf: octets) }

    private static func isValid(_ position: (octet: Int, bit: Int)) -> Bool {
        (0..<length).contains(position.octet) && (0..<8).contains(position.bit)
    }

    /// Whether the bit at `octet`, `bit` is set; false outside the table.
    public func isSet(octet: Int, bit: Int) -> Bool {
        guard Self.isValid((octet, bit)) else { return false }
        return octets[octet] & (1 << UInt8(bit)) != 0
    }

    /// Whether the controller advertises `command`. A command without a bit (Read Local
    /// Supported Commands itself) is one every controller must support, so it counts as
    /// supported: the host cannot learn otherwise and would never send it.
    public func supports(_ command: any HCICommand.Type) -> Bool {
        guard let position = command.supportedCommandBit else { return true }
        return isSet(octet: position.octet, bit: position.bit)
    }

    /// Every command in ``HCICommands/all`` this controller supports, in catalogue order.
    public var supportedCommandTypes: [any HCICommand.Type] {
        HCICommands.all.filter { supports($0) }
    }

    /// How many bits are set, including commands BareBLE does not declare.
    public var count: Int { octets.reduce(0) { $0 + $1.nonzeroBitCount } }
}

extension SupportedCommands: CustomStringConvertible {
    public var description: String {
        "SupportedCommands(\(count) bits set: \(supportedCommandTypes.map { $0.name }.joined(separator: ", ")))"
    }
}
