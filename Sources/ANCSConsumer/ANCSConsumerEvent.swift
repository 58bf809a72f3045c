import ANCS
import BareBLE
import BluetoothCore
import GATT

/// What an ``ANCSConsumer`` saw, in order per link.
public enum ANCSConsumerEvent: Sendable {
    /// Advertising (re)started from this address.
    case advertising(DeviceAddress)
    /// A phone connected: the address it used and the identity its bond resolves it to
    /// (the same address when there is no bond).
    case connected(address: DeviceAddress, identity: DeviceAddress)
    /// A pairing ended on the link; `bonded` when its keys reached the bond store.
    case paired(identity: DeviceAddress, bonded: Bool)
    case pairingFailed(identity: DeviceAddress, reason: String)
    /// The link is encrypted (after pairing, or with the stored bond).
    case encrypted(identity: DeviceAddress)
    /// ANCS is subscribed (Data Source, then Notification Source); `media` when AMS is too.
    case subscribed(identity: DeviceAddress, media: Bool)
    /// A notification added, modified or removed (see ``ANCSSessionOutput/notification(_:)``).
    case notification(ANCSNotification)
    case actionFinished(uid: UInt32, action: NotificationAction, failure: ANCSCommandFailure?)
    /// Something the phone sent that was not used, or that the user must act on.
    case problem(ANCSProblem)
    /// The link could not be brought to ANCS, or its AMS could not be subscribed (the link
    /// stays up; notifications work without AMS).
    case linkFailed(identity: DeviceAddress, ANCSConsumerError)
    /// The media app's remote commands available now.
    case mediaCommands([AMSRemoteCommand])
    /// Now-playing changed.
    case nowPlaying(AMSNowPlaying)
    /// The link ended; the HCI reason.
    case disconnected(address: DeviceAddress, identity: DeviceAddress, reason: String)
}

/// Why a link, a media command or the consumer itself failed.
public enum ANCSConsumerError: Error, Sendable, CustomStringConvertible {
    case manager(PeripheralManagerError)
    case advertising(PeripheralHostError)
    /// Pairing or encrypting failed.
    case security(PeripheralError)
    case discovery(GATTError)
    /// The phone published no ANCS within the wait (iOS publishes it only to an encrypted,
    /// bonded link).
    case noNotificationService
    case subscription(GATTError)
    /// No phone is connected with AMS subscribed.
    case noMediaService
    case mediaCommand(GATTError)

    public var description: String {
        switch self {
        case let .manager(error): "\(error)"
        case let .advertising(error): "cannot advertise: \(error)"
        case let .security(error): "securing the link failed: \(error)"
        case let .discovery(error): "discovering the phone's services failed: \(error)"
        case .noNotificationService: "the phone publishes no Apple Notification Center Service on this link"
        case let .subscription(error): "subscribing to ANCS failed: \(error)"
        case .noMediaService: "no phone with Apple Media Service is connected"
        case let .mediaCommand(error): "the media command failed: \(error)"
        }
    }
}
