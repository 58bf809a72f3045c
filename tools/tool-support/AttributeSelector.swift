import BluetoothCore

/// CHAR on the command line: a 16- or 128-bit UUID, or a handle.
public enum AttributeSelector: Equatable, Sendable, CustomStringConvertible {
    case uuid(BluetoothUUID)
    case handle(UInt16)

    /// "0x0024" and decimals are handles; four hex digits ("2A19") and the dashed 128-bit
    /// form are UUIDs, so a four-digit decimal handle must be written in 0x form.
    public init?(_ text: String) {
        if text.hasPrefix("0x") || text.hasPrefix("0X") {
            guard let handle = UInt16(text.dropFirst(2), radix: 16), handle > 0 else { return nil }
            self = .handle(handle)
        } else if text.count != 4, text.allSatisfy(\.isNumber), let handle = UInt16(text), handle > 0 {
            self = .handle(handle)
        } else if text.count == 4 || text.count == 36, let uuid = BluetoothUUID(text) {
            self = .uuid(uuid)
        } else {
            return nil
        }
    }

    public static let help = "A characteristic: its 16-bit (2A19) or 128-bit UUID, or a handle (0x0024 or 36; a handle may also name a descriptor)."

    public var description: String {
        switch self {
        case .uuid(let uuid): uuid.description
        case .handle(let handle): "handle \(handleText(handle))"
        }
    }
}

/// "0x002A": a handle as the tools print it.
public func handleText(_ handle: UInt16) -> String { "0x" + Hex.string([UInt8(handle >> 8), UInt8(handle & 0xFF)]) }
