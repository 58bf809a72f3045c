import ATT
import BluetoothCore
import GATT

/// What happened on a ``PeripheralManager``, from ``PeripheralManager/events()``. The
/// link events (connections, pairing, encryption, advertising) are the host's; the GATT
/// ones come from the server as it answers requests. The two sources are ordered each in
/// itself, not with each other: a request's event may come before its link's `connected`.
public enum PeripheralManagerEvent: Sendable {
    /// Advertising, connections, pairing and encryption, as ``PeripheralHost`` reports them.
    case host(PeripheralHostEvent)
    /// A central's Exchange MTU Request settled its link's ATT_MTU: told once, with the MTU
    /// in effect (on `hci-raw:N` the kernel's), not what a later request asked for.
    case mtu(PeripheralManager.Request, mtu: UInt16)
    /// A central read a characteristic value (after permissions and the application's
    /// handler allowed it).
    case read(PeripheralManager.Request)
    /// A central wrote a characteristic value or a descriptor other than the CCCD
    /// (`withResponse` false for Write Command).
    case wrote(PeripheralManager.Request, value: [UInt8], withResponse: Bool)
    /// A central wrote a characteristic's CCCD with notifications or indications on.
    case subscribed(PeripheralManager.Request, ClientCharacteristicConfiguration)
    /// A central wrote a characteristic's CCCD with both off.
    case unsubscribed(PeripheralManager.Request)
    /// A central was indicated Service Changed (services were added or removed while it was
    /// connected, or before a bonded central came back): `confirmed` false when the link
    /// ended or the confirmation did not come in time. A confirmation makes it
    /// change-aware again.
    case serviceChanged(PeripheralManager.Request, range: ClosedRange<UInt16>, confirmed: Bool)
    /// ``PeripheralManager/updateValue(_:for:onSubscribedCentrals:)`` returned false
    /// since the last of these, and the queues it found full have room again
    /// (`peripheralManagerIsReady(toUpdateSubscribers:)`).
    case readyToUpdateSubscribers
}

extension PeripheralManager {
    /// Who asked for what: the link (its HCI handle, as ``RemoteCentral/handle``), the
    /// central (its bonded identity when known) and the attribute.
    public struct Request: Sendable, Hashable {
        public var bearer: UInt16
        public var central: DeviceAddress?
        /// The attribute's handle: a characteristic value, or a descriptor.
        public var handle: UInt16
        /// The characteristic the attribute belongs to (nil for other attributes: a
        /// service or characteristic declaration).
        public var characteristic: BluetoothUUID?
        /// The characteristic's value handle.
        public var valueHandle: UInt16?
    }
}
