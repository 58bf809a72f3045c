import HCI

/// BareBLE's own host on one controller (user channel `hci:N`, H4, the virtual radio): L2CAP's
/// ``ChannelManager`` and HCI's `Connector`, made in the one order the stack works in.
///
/// The controller calls its event subscribers in the order they subscribed. A connection
/// made to us is handed to the Connector's acceptor on the reader thread as its LE
/// Connection Complete is handled, and the acceptor builds the link's ATT bearer and SMP
/// on L2CAP at once: L2CAP must have handled that event first, or it does not know the
/// handle yet and the link cannot be built. So L2CAP subscribes here before the Connector
/// exists, and outside this package this is the only way to get a Connector.
public struct ControllerHost: Sendable {
    public let channels: ChannelManager
    public let connector: Connector

    /// Attaches to `controller` (before any connection exists): L2CAP takes its ACL data
    /// and follows its events, then the Connector follows them.
    public init(controller: HCIController, configuration: ChannelManager.Configuration = ChannelManager.Configuration()) {
        channels = ChannelManager(controller: controller, configuration: configuration)
        connector = Connector(controller: controller)
    }

    public var controller: HCIController { channels.controller }
}
