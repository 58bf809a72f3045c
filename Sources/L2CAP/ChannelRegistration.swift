/// A channel's receiver set on one connection (``ChannelManager/setHandler(_:channel:connection:)``):
/// names that connection, not only its handle, which the controller gives to the next link
/// as soon as this one is gone.
public struct ChannelRegistration: Sendable, Hashable {
    public let channel: ChannelIdentifier
    public let handle: UInt16
    /// The connection's (``ConnectionState``), unique per connection.
    let serial: UInt64
}
