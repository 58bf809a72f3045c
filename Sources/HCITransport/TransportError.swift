/// Why a transport could not open, read or write. Every case's description tells the user
/// what to do next.
public enum TransportError: Error, Sendable, Equatable, CustomStringConvertible {
    case invalidSpec(String)

    public var description: String {
        switch self {
        case let .invalidSpec(text): "invalid transport \(text)"
        }
    }
}
