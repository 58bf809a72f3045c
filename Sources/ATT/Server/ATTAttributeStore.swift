import BluetoothCore

/// How one link is protected now, as the ATT server checks permissions against it
/// (Core 5.4 Vol 3 Part C 10.3, Vol 3 Part F 3.2.5).
public struct ATTLinkSecurity: Sendable, Hashable {
    public var isEncrypted: Bool
    /// The link's key came from an authenticated (MITM-protected) pairing.
    public var isAuthenticated: Bool
    /// The link's key came from an LE Secure Connections pairing.
    public var isSecureConnections: Bool
    /// The encryption key size in octets (7...16), 0 while the link is not encrypted.
    public var keySize: UInt8
    /// A long-term key for this peer exists, so encryption is possible without pairing:
    /// decides between Insufficient Encryption (0x0F) and Insufficient Authentication
    /// (0x05) on an unencrypted link.
    public var hasLongTermKey: Bool

    public init(
        isEncrypted: Bool = false, isAuthenticated: Bool = false, isSecureConnections: Bool = false,
        keySize: UInt8 = 0, hasLongTermKey: Bool = false
    ) {
        self.isEncrypted = isEncrypted
        self.isAuthenticated = isAuthenticated
        self.isSecureConnections = isSecureConnections
        self.keySize = keySize
        self.hasLongTermKey = hasLongTermKey
    }

    /// A new, unencrypted link with no bond.
    public static let open = ATTLinkSecurity()
}

/// Who sent a request to the server, and over what.
public struct ATTServerContext: Sendable, Hashable {
    /// Names the bearer (the HCI connection handle, or a kernel socket's number): per-client
    /// state (CCCDs, prepare queues, change-awareness) is kept by it.
    public var bearer: UInt16
    /// The peer's identity address when known (its bond's), else the address it connected
    /// from.
    public var peer: DeviceAddress?
    public var security: ATTLinkSecurity
    /// Tells apart the bearers given the same ``bearer`` number one after another (a
    /// controller reuses a connection handle as soon as its link is gone): each
    /// ``ATTServer`` takes the next, from 1, so a later bearer's is larger. A request still
    /// running when its bearer closed (a handler's wait) carries the old one, and a store
    /// must not let it act on the next bearer's state. A context made by hand names its
    /// bearer's instance too: once a store closed an instance, nothing of it counts again.
    public var instance: UInt64
    /// When the request being handled must be answered by (``ATTServer/Configuration/requestDeadline``):
    /// a store gives up on what is left of it (Unlikely Error) rather than let the client's
    /// 30 s transaction timeout end the link. Nil for a command.
    public var requestDeadline: ContinuousClock.Instant?

    public init(
        bearer: UInt16, instance: UInt64, peer: DeviceAddress? = nil, security: ATTLinkSecurity = .open,
        requestDeadline: ContinuousClock.Instant? = nil
    ) {
        self.bearer = bearer
        self.peer = peer
        self.security = security
        self.instance = instance
        self.requestDeadline = requestDeadline
    }
}

/// What reading or writing one attribute requires (Core 5.4 Vol 3 Part F 3.2.5).
public struct ATTPermissions: Sendable, Hashable {
    /// How strongly the link must be protected.
    public enum Protection: UInt8, Sendable, Hashable, Comparable {
        case none
        case encryption
        /// Encryption with a key from an authenticated pairing.
        case authentication
        /// Authentication, and the key came from LE Secure Connections.
        case secureConnections

        public static func < (lhs: Protection, rhs: Protection) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// One operation's requirements.
    public struct Access: Sendable, Hashable {
        public var protection: Protection
        /// The least encryption key size, 7...16; checked whenever protection is not `.none`.
        public var minimumKeySize: UInt8
        /// The store's ``ATTAttributeStore/authorize(_:operation:context:)`` decides too.
        public var requiresAuthorization: Bool

        public init(protection: Protection = .none, minimumKeySize: UInt8 = 7, requiresAuthorization: Bool = false) {
            self.protection = protection
            self.minimumKeySize = minimumKeySize
            self.requiresAuthorization = requiresAuthorization
        }

        public static let open = Access()
    }

    /// Nil: Read Not Permitted (0x02).
    public var read: Access?
    /// Nil: Write Not Permitted (0x03).
    public var write: Access?

    public init(read: Access? = nil, write: Access? = nil) {
        self.read = read
        self.write = write
    }

    public static let readOnly = ATTPermissions(read: .open)
    public static let readWrite = ATTPermissions(read: .open, write: .open)
}

/// The two operations permissions distinguish.
public enum ATTOperation: Sendable, Hashable {
    case read
    case write
}

/// One attribute as the server lists it: everything discovery needs without its value.
public struct ATTAttribute: Sendable, Hashable {
    public var handle: UInt16
    public var type: BluetoothUUID
    public var permissions: ATTPermissions
    /// For a grouping attribute (a service declaration), the group's last handle; nil
    /// otherwise. Read By Group Type answers with it.
    public var groupEnd: UInt16?

    public init(handle: UInt16, type: BluetoothUUID, permissions: ATTPermissions, groupEnd: UInt16? = nil) {
        self.handle = handle
        self.type = type
        self.permissions = permissions
        self.groupEnd = groupEnd
    }
}

/// How a write arrived, which decides whether an error can be reported at all.
public enum ATTWriteKind: Sendable, Hashable {
    /// Write Request: the error, if any, goes back as an Error Response.
    case request
    /// Write Command or a verified Signed Write Command: errors are not reported (Vol 3
    /// Part F 3.4.5.3).
    case command
    /// One value of an Execute Write Request, written in queue order.
    case reliable
}

/// What an ATT server serves: the attribute table of one GATT server, shared by every
/// bearer. The ATT server owns the protocol (PDU layout, MTU packing, permission checks
/// against ``ATTAttribute/permissions``, offsets, the prepare queue, error codes); the store
/// owns values and per-client meaning (CCCDs, change-awareness, application callbacks).
///
/// `attributes(in:limit:)` and `attribute(at:)` are synchronous and cheap (discovery walks
/// them). `read` and `write` may wait for an application; the server has already checked
/// the permissions (except authorization) and the length (at most 512 octets) before
/// calling them.
public protocol ATTAttributeStore: AnyObject, Sendable {
    /// Attributes whose handles lie in `range`, in ascending handle order, at most `limit`.
    func attributes(in range: ClosedRange<UInt16>, limit: Int) -> [ATTAttribute]

    /// The attribute at `handle`, or nil when there is none.
    func attribute(at handle: UInt16) -> ATTAttribute?

    /// Decides an attribute whose access ``ATTPermissions/Access/requiresAuthorization``:
    /// nil allows, else the error to send (usually Insufficient Authorization, 0x08).
    func authorize(_ attribute: ATTAttribute, operation: ATTOperation, context: ATTServerContext) async -> ATTErrorCode?

    /// The whole current value (at most 512 octets), or the error to answer with.
    func read(_ attribute: ATTAttribute, context: ATTServerContext) async -> Result<[UInt8], ATTErrorCode>

    /// The whole current value when the store holds it and no application has to be asked
    /// (or the error to answer with, as ``read(_:context:)`` would); nil when only
    /// ``read(_:context:)`` can tell. Called on the bearer's thread, after the permission
    /// checks, so a read of a stored value is answered there, without a task: it must not
    /// block. Stores that do not implement it leave every read to ``read(_:context:)``.
    func storedValue(_ attribute: ATTAttribute, context: ATTServerContext) -> Result<[UInt8], ATTErrorCode>?

    /// Writes a whole value; nil on success, else the error to answer with (Invalid
    /// Attribute Value Length 0x0D for a CCCD of the wrong length, Value Not Allowed 0x13,
    /// an application error). For `.command` the answer is only counted.
    func write(_ attribute: ATTAttribute, value: [UInt8], kind: ATTWriteKind, context: ATTServerContext) async -> ATTErrorCode?

    /// Robust caching (Core 5.4 Vol 3 Part G 2.5.2.1): called for every request and command
    /// before it is handled. Nil lets it through; an error (Database Out Of Sync, 0x12)
    /// answers a request with it and makes the server ignore a command.
    func admit(_ request: ATTPDU, context: ATTServerContext) -> ATTErrorCode?

    /// The bearer `context` names has ended: forget what was kept for it alone.
    func bearerClosed(_ context: ATTServerContext)

    /// Whether the client on `context`'s bearer takes Multiple Handle Value Notifications
    /// (3.4.7.4): a GATT server's client says so in its Client Supported Features.
    func acceptsMultipleNotifications(_ context: ATTServerContext) -> Bool
}

extension ATTAttributeStore {
    public func storedValue(_ attribute: ATTAttribute, context: ATTServerContext) -> Result<[UInt8], ATTErrorCode>? { nil }
    public func acceptsMultipleNotifications(_ context: ATTServerContext) -> Bool { false }
}
