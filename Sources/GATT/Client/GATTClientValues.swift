import BluetoothCore

/// What Service Changed told the client, after it rediscovered the affected handles.
public struct GATTDatabaseChange: Sendable, Equatable {
    /// The handles the server said changed, widened to whole services.
    public var affectedHandles: ClosedRange<UInt16>
    /// The database after rediscovery; after a failed one, without the affected services
    /// and without a Database Hash.
    public var database: GATTDatabase
    /// Why the rediscovery failed (the link went, or the server answered nonsense); nil
    /// when it succeeded.
    public var failure: GATTError? = nil
}

/// One attribute's handle and value (Read Using Characteristic UUID answers with these).
public struct GATTAttributeValue: Sendable, Hashable {
    public var handle: UInt16
    public var value: [UInt8]

    public init(handle: UInt16, value: [UInt8]) {
        self.handle = handle
        self.value = value
    }
}

/// One value of a reliable write.
public struct GATTWrite: Sendable, Hashable {
    public var handle: UInt16
    public var value: [UInt8]

    public init(handle: UInt16, value: [UInt8]) {
        self.handle = handle
        self.value = value
    }
}
