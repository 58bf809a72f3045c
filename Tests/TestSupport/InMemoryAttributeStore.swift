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
        state.withLock { $0.admission }
    }

    public func bearerClosed(_ context: ATTServerContext) {
        state.withLock { $0.closedBearers.append(context.bearer) }
    }
}
