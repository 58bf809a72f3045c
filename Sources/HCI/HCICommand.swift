import BluetoothCore

/// One HCI command, declared once: its opcode, its parameters in both directions, and what
/// its Command Complete returns after the status byte.
///
/// Conforming types are value types named after the specification's command
/// (`LEReadBufferSizeV2`), with properties named after its parameters.
public protocol HCICommand: Sendable {
    associatedtype ReturnParameters: HCIReturnParameters = NoReturnParameters

    static var opcode: HCIOpcode { get }
    /// The specification's name, "LE Read Buffer Size [v2]".
    static var name: String { get }
    /// Where the Supported_Commands bitmask (Core Vol 4 Part E 6.27) advertises this
    /// command: octet and bit. Nil for commands every controller must support.
    static var supportedCommandBit: (octet: Int, bit: Int)? { get }
    /// True for commands the controller answers with Command Status, finishing later with
    /// an event (LE Create Connection, Disconnect, ...). The driver then returns on the status.
    static var completesWithStatus: Bool { get }

    func encodeParameters(into writer: inout ByteWriter)
    init(parameters reader: inout ByteReader) throws(DecodeError)
}

extension HCICommand {
    public static var supportedCommandBit: (octet: Int, bit: Int)? { nil }
    public static var completesWithStatus: Bool { false }

    /// The command packet: opcode, parameter length, parameters.
    public func encode() -> [UInt8] {
        var parameters = ByteWriter()
        encodeParameters(into: &parameters)
        var writer = ByteWriter(capacity: 3 + parameters.bytes.count)
        writer.write(Self.opcode.rawValue)
        writer.write(UInt8(truncatingIfNeeded: parameters.bytes.count))
        writer.write(contentsOf: parameters.bytes)
        return writer.bytes
    }
}

/// What a command's Command Complete event carries after the status byte.
public protocol HCIReturnParameters: Sendable {
    init(decoding reader: inout ByteReader) throws(DecodeError)
    func encode(into writer: inout ByteWriter)
}

/// For commands whose Command Complete holds only the status.
public struct NoReturnParameters: HCIReturnParameters, Equatable {
    public init() {}
    /// Throws on anything after the status: bytes there mean the controller and BareBLE
    /// disagree about the command, which is worth an error rather than silence.
    public init(decoding reader: inout ByteReader) throws(DecodeError) { try reader.expectEnd() }
    public func encode(into writer: inout ByteWriter) {}
}
