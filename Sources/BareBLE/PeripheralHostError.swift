import HCI
import KernelHost

/// Why a ``PeripheralHost`` could not be made or could not advertise.
public enum PeripheralHostError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Beside the kernel (`hci-raw:N`): the kernel's ATT listener or pairing agent could
    /// not be set up.
    case kernel(KernelSocketError)
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
        case let .kernel(error):
            "cannot accept centrals through the kernel: \(error)"
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
