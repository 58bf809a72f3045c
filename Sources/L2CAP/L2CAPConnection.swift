import BluetoothCore
import HCI

/// An LE connection as L2CAP knows it: learnt from (Enhanced) Connection Complete, gone at
/// Disconnection Complete.
public struct L2CAPConnection: Sendable, Equatable {
    /// 12-bit connection handle.
    public let handle: UInt16
    /// The local device's role.
    public let role: ConnectionRole
    public let peerAddressType: ReportedAddressType
    public let peerAddress: BluetoothAddress
    /// Units of 1.25 ms; follows LE Connection Update Complete.
    public internal(set) var connectionInterval: UInt16
    public internal(set) var peripheralLatency: UInt16
    /// Units of 10 ms.
    public internal(set) var supervisionTimeout: UInt16

    public init(
        handle: UInt16, role: ConnectionRole, peerAddressType: ReportedAddressType, peerAddress: BluetoothAddress,
        connectionInterval: UInt16, peripheralLatency: UInt16, supervisionTimeout: UInt16
    ) {
        self.handle = handle
        self.role = role
        self.peerAddressType = peerAddressType
        self.peerAddress = peerAddress
        self.connectionInterval = connectionInterval
        self.peripheralLatency = peripheralLatency
        self.supervisionTimeout = supervisionTimeout
    }
}

/// What a fixed channel's handler is told, on the transport's reader thread, in order.
public enum ChannelEvent: Sendable, Equatable {
    /// One whole SDU (the B-frame payload) for this channel.
    case received([UInt8])
    /// A PDU for this channel announced `length` octets, more than its receive maximum, and
    /// was dropped unread (counted in ``L2CAPStatistics/oversizedPDUs``); `prefix` is its
    /// first octets (at most 2), so the protocol above can tell what it was (ATT fails the
    /// request the PDU answered at once instead of at its timeout).
    case oversized(length: Int, prefix: [UInt8])
    /// The connection ended; nothing more will arrive. Pending requests above L2CAP (ATT
    /// transactions, pairing) should fail with this reason.
    case disconnected(reason: HCIErrorCode)
}

/// Connection lifecycle as L2CAP sees it.
public enum ConnectionEvent: Sendable, Equatable {
    /// Delivered before any data of the connection can be, so channel handlers registered
    /// from here miss nothing.
    case connected(L2CAPConnection)
    case disconnected(L2CAPConnection, reason: HCIErrorCode)
}
