import HCI

/// Why a ``PeripheralHost`` could not be made or could not advertise.
public enum PeripheralHostError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Beside the kernel (`hci-raw:N`) the kernel owns connections and answers for them.
    case kernelOwnsConnections(adapter: Int)
    /// Another ``PeripheralHost`` already accepts this Central's connections.
    case alreadyAccepting
    /// The options ask for something impossible; the text says what.
    case invalidOptions(String)
    /// ``SecurityPolicy/privacy`` is on but there is no bond store to hold our IRK.
    case privacyNeedsBondStore
    /// The controller refused the advertising (or its data).
    case advertising(AdvertisingError)

    public var description: String {
        switch self {
        case let .kernelOwnsConnections(adapter):
            "hci\(adapter) is shared with the kernel (hci-raw), which accepts and serves connections itself: use the user channel (hci:\(adapter)) or an H4 transport to accept connections with BareBLE"
        case .alreadyAccepting:
            "another PeripheralHost already accepts this Central's connections: stop using it, or use that one"
        case let .invalidOptions(why):
            why
        case .privacyNeedsBondStore:
            "privacy needs our IRK, which lives in the bond store: set SecurityPolicy.bonds (e.g. a BondStore in the default directory)"
        case let .advertising(error):
            "\(error)"
        }
    }
}
