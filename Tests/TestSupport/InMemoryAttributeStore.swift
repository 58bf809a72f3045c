import ATT
import BluetoothCore

/// An attribute store held in memory, for driving an ``ATTServer`` in tests: values, what
/// the server wrote and how, authorization and admission decisions, refused values, and a
/// gate that holds reads until released (to keep a request outstanding).
public final class InMemoryAttributeStore: ATTAttributeStore {
    public struct Write: Sendable, Equatable {
        public let handle: UInt16
        public let value: [UInt8]
        public let kind: ATTWriteKind
        public let bearer: UInt16

        public init(handle: UInt16, value: [UInt8], kind: ATTWriteKind, bearer: UInt16) {
            self.handle = handle
            self.value = value
            self.kind = kind
            self.bearer = bearer
        }
    }

    private struct State {
        var attributes: [UInt16: (attribute: ATTAttribute, value: [UInt8])] = [:]
        var writes: [Write] = []
        var authorization: [UInt16: ATTErrorCode] = [:]
        var refusedValues: [UInt16: (value: [UInt8], code: ATTErrorCode)] = [:]
        var admission: ATTErrorCode?
        var closedBearers: [UInt16] = []
        var readsHeld = false
        var heldReads: [CheckedContinuation<Void, Never>] = []
        var heldReadWaiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
        var readCount = 0
        var admissions = 0
        var multipleNotificationsAccepted = false
    }

    private let state = Lock(State())

    public init(_ attributes: [(ATTAttribute, [UInt8])] = []) {
        state.withLock { state in
            for (attribute, value) in attributes { state.attributes[attribute.handle] = (attribute, value) }
        }
    }

    /// Adds or replaces an attribute.
    public func add(_ attribute: ATTAttribute, value: [UInt8]) {
        state.withLock { $0.attributes[attribute.handle] = (attribute, value) }
    }

    public func value(at handle: UInt16) -> [UInt8]? { state.withLock { $0.attributes[handle]?.value } }
    public var writes: [Write] { state.withLock { $0.writes } }
    public var closedBearers: [UInt16] { state.withLock { $0.closedBearers } }
    /// Reads the server has asked for.
    public var readCount: Int { state.withLock { $0.readCount } }
    /// Requests and commands the server has asked ``admit(_:context:)`` about.
    public var admissions: Int { state.withLock { $0.admissions } }

    /// `authorize` answers `code` for `handle` (nil allows).
    public func setAuthorization(_ code: ATTErrorCode?, for handle: UInt16) {
        state.withLock { $0.authorization[handle] = code }
    }

    /// A write of exactly `value` to `handle` is refused with `code` (Value Not Allowed,
    /// an application error).
    public func refuse(_ value: [UInt8], at handle: UInt16, with code: ATTErrorCode) {
        state.withLock { $0.refusedValues[handle] = (value, code) }
    }

    /// Every request and command is refused with `code` (Database Out Of Sync), or admitted.
    public func setAdmission(_ code: ATTErrorCode?) { state.withLock { $0.admission = code } }

    /// Holds every read until ``releaseReads()``.
    public func holdReads() { state.withLock { $0.readsHeld = true } }

    public func releaseReads() {
        let held = state.withLock { state in
            state.readsHeld = false
            defer { state.heldReads = [] }
            return state.heldReads
        }
        for continuation in held { continuation.resume() }
    }

    /// Waits until `count` reads are held at the gate. Tests bound it with a deadline.
    public func waitForHeldReads(_ count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state in
                if state.heldReads.count >= count { return true }
                state.heldReadWaiters.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    // MARK: ATTAttributeStore

    public func attributes(in range: ClosedRange<UInt16>, limit: Int) -> [ATTAttribute] {
        state.withLock { state in
            Array(state.attributes.values.map(\.attribute).filter { range.contains($0.handle) }
                .sorted { $0.handle < $1.handle }.prefix(limit))
        }
    }

    public func attribute(at handle: UInt16) -> ATTAttribute? { state.withLock { $0.attributes[handle]?.attribute } }

    public func authorize(_ attribute: ATTAttribute, operation: ATTOperation, context: ATTServerContext) async -> ATTErrorCode? {
        state.withLock { $0.authorization[attribute.handle] }
    }

    /// Every value is stored, so every read is answered here, except while reads are held:
    /// those must reach ``read(_:context:)``'s gate.
    public func storedValue(_ attribute: ATTAttribute, context: ATTServerContext) -> Result<[UInt8], ATTErrorCode>? {
        state.withLock { state in
            guard !state.readsHeld else { return nil }
            state.readCount += 1
            guard let value = state.attributes[attribute.handle]?.value else { return .failure(.unlikelyError) }
            return .success(value)
        }
    }

    public func read(_ attribute: ATTAttribute, context: ATTServerContext) async -> Result<[UInt8], ATTErrorCode> {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let (held, ready) = state.withLock { state in
                state.readCount += 1
                guard state.readsHeld else { return (false, [CheckedContinuation<Void, Never>]()) }
                state.heldReads.append(continuation)
                let count = state.heldReads.count
                let ready = state.heldReadWaiters.filter { $0.count <= count }.map(\.continuation)
                state.heldReadWaiters.removeAll { $0.count <= count }
                return (true, ready)
            }
            for waiter in ready { waiter.resume() }
            if !held { continuation.resume() }
        }
        return state.withLock { state in
            guard let value = state.attributes[attribute.handle]?.value else { return .failure(.unlikelyError) }
            return .success(value)
        }
    }

    public func write(_ attribute: ATTAttribute, value: [UInt8], kind: ATTWriteKind, context: ATTServerContext) async -> ATTErrorCode? {
        state.withLock { state in
            if let refused = state.refusedValues[attribute.handle], refused.value == value { return refused.code }
            state.attributes[attribute.handle]?.value = value
            state.writes.append(Write(handle: attribute.handle, value: value, kind: kind, bearer: context.bearer))
            return nil
        }
    }

    public func admit(_ request: ATTPDU, context: ATTServerContext) -> ATTErrorCode? {
        state.withLock { state in
            state.admissions += 1
            return state.admission
        }
    }

    public func bearerClosed(_ context: ATTServerContext) {
        state.withLock { $0.closedBearers.append(context.bearer) }
    }

    /// Whether ``acceptsMultipleNotifications(_:)`` says yes, for every bearer (as a GATT
    /// store does once the client set the bit in its Client Supported Features).
    public var multipleNotificationsAccepted: Bool {
        get { state.withLock { $0.multipleNotificationsAccepted } }
        set { state.withLock { $0.multipleNotificationsAccepted = newValue } }
    }

    public func acceptsMultipleNotifications(_ context: ATTServerContext) -> Bool { multipleNotificationsAccepted }
}

extension InMemoryAttributeStore {
    /// The custom 128-bit UUID of ``testDatabase()``, little-endian hex.
    public static let testUUID128 = "F0 DE BC 9A 78 56 34 12 34 12 78 56 34 12 00 00"

    /// A small GATT-shaped database for server tests and the server's fuzz target: GAP,
    /// a 128-bit service with a 100-octet value and a CCCD, values needing encryption,
    /// authentication, Secure Connections, a 16-octet key and authorization (refused), a
    /// secondary service with a write-only and a read-only value.
    public static func testDatabase() -> InMemoryAttributeStore {
        func attribute(_ handle: UInt16, _ type: UInt16, _ permissions: ATTPermissions, groupEnd: UInt16? = nil) -> ATTAttribute {
            ATTAttribute(handle: handle, type: BluetoothUUID(type), permissions: permissions, groupEnd: groupEnd)
        }
        let custom = try! BluetoothUUID(littleEndian: Hex.bytes(testUUID128)!)
        let encrypted = ATTPermissions.Access(protection: .encryption)
        let store = InMemoryAttributeStore([
            (attribute(0x0001, 0x2800, .readOnly, groupEnd: 0x0005), [0x00, 0x18]),
            (attribute(0x0002, 0x2803, .readOnly), [0x02, 0x03, 0x00, 0x00, 0x2A]),
            (attribute(0x0003, 0x2A00, .readOnly), Array("BareBLE".utf8)),
            (attribute(0x0004, 0x2803, .readOnly), [0x0A, 0x05, 0x00, 0x01, 0x2A]),
            (attribute(0x0005, 0x2A01, .readWrite), [0x00, 0x00]),
            (attribute(0x0006, 0x2800, .readOnly, groupEnd: 0x000B), Hex.bytes(testUUID128)!),
            (attribute(0x0007, 0x2803, .readOnly), [0x1A, 0x08, 0x00] + Hex.bytes(testUUID128)!),
            (ATTAttribute(handle: 0x0008, type: custom, permissions: .readWrite), (0..<100).map { UInt8($0) }),
            (attribute(0x0009, 0x2902, .readWrite), [0x00, 0x00]),
            (attribute(0x000A, 0x2A19, .init(read: encrypted)), [0x64]),
            (attribute(0x000B, 0x2A19, .init(read: .init(protection: .encryption), write: .init(protection: .encryption))), [0x63]),
            (attribute(0x000C, 0x2800, .readOnly, groupEnd: 0x0010), [0x0F, 0x18]),
            (attribute(0x000D, 0x2A19, .init(read: .init(protection: .authentication))), [0x62]),
            (attribute(0x000E, 0x2A19, .init(read: .init(protection: .secureConnections))), [0x61]),
            (attribute(0x000F, 0x2A19, .init(read: .init(protection: .encryption, minimumKeySize: 16))), [0x60]),
            (attribute(0x0010, 0x2A19, .init(read: .init(requiresAuthorization: true))), [0x5F]),
            (attribute(0x0011, 0x2801, .readOnly, groupEnd: 0x0013), [0x0A, 0x18]),
            (attribute(0x0012, 0x2A29, .init(write: .open)), [0x01]),
            (attribute(0x0013, 0x2A2A, .readOnly), [0x02]),
        ])
        store.setAuthorization(.insufficientAuthorization, for: 0x0010)
        return store
    }
}
