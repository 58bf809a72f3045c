import ATT

/// Whom a new value of a characteristic goes to, as ``GATTServerStore/recipients(of:)``
/// finds them.
public struct GATTRecipients: Sendable, Equatable {
    /// A subscribed client: its bearer and what it asked for (its CCCD).
    public struct Subscriber: Sendable, Equatable {
        public var bearer: UInt16
        public var configuration: ClientCharacteristicConfiguration

        public init(bearer: UInt16, configuration: ClientCharacteristicConfiguration) {
            self.bearer = bearer
            self.configuration = configuration
        }
    }

    /// The subscribers in bearer order, less the change-unaware clients that enabled
    /// robust caching: nothing but the Service Changed indication may go to those (Part G
    /// 2.5.2.1).
    public var subscribers: [Subscriber]
    /// The bearers of those change-unaware clients, in order.
    public var withheld: [UInt16]
    /// What a subscriber's link must have for the value to go to it: what reading the
    /// value asks and what writing its CCCD asks, the stronger of each. The store does not
    /// know a link's security between requests, so the sender checks each subscriber's
    /// (``ATTPermissions/Access/denial(on:)``) and sends nothing where it is refused: a
    /// value a central may not read does not reach it in a notification either.
    public var access: ATTPermissions.Access
}
