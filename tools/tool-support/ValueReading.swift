import BareBLE
import BluetoothCore
import GATT

/// A value read (or the failure to read it) as the explorer, `read` and `subscribe`
/// print it: hex, and decoded when BareBLE knows the format.
public struct ValueReading: Sendable {
    public var value: [UInt8]?
    public var decoded: String?
    public var decodeError: String?
    public var error: PeripheralError?

    public init(value: [UInt8], decoded: Result<DecodedValue, DecodeError>?) {
        self.value = value
        switch decoded {
        case .success(let decoded)?: self.decoded = decoded.description
        case .failure(let error)?: decodeError = "\(error)"
        case nil: break
        }
    }

    public init(error: PeripheralError) {
        self.error = error
    }

    /// Nothing read: the value is null.
    public init() {}

    /// "42617265424C45  "BareBLE"", "(empty)", "error: ...".
    public var text: String {
        if let error { return "error: " + userMessage(error) }
        guard let value else { return "-" }
        var line = value.isEmpty ? "(empty)" : Hex.string(value)
        if let decoded { line += "  " + TerminalText.printable(decoded) }
        if let decodeError { line += "  (does not decode: \(decodeError))" }
        return line
    }

    /// value (hex or null), decoded, and error with its ATT code when the read failed.
    public var jsonMembers: [(String, JSONValue)] {
        var members: [(String, JSONValue)] = [("value", value.map { .string(Hex.string($0)) } ?? .null)]
        if let decoded { members.append(("decoded", .string(decoded))) }
        if let decodeError { members.append(("decodeError", .string(decodeError))) }
        if let error {
            members.append(("error", .string(userMessage(error))))
            members.append(("errorCode", error.errorCode.map { .int(Int($0.rawValue)) } ?? .null))
        }
        return members
    }
}
