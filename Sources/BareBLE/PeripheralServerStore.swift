import ATT
import BluetoothCore
import GATT

/// The ``GATTServerStore`` as each link's ``ATTServer`` serves it, with the application told
/// of what centrals did: every call goes to the store unchanged, and what succeeded is
/// reported as a ``PeripheralManagerEvent`` after the store has taken it.
final class PeripheralServerStore: ATTAttributeStore {
    let store: GATTServerStore
    private let report: @Sendable (PeripheralManagerEvent) -> Void
    /// The manager's hooks, set once. Kept in a struct: a closure kept bare in a `Lock` is
    /// re-wrapped in two reabstraction thunks by every `withLock { $0 }` (out of the
    /// generic value and back into it), so each request grew a chain that every later call
    /// walked, until the stack overflowed.
    private let hooks = Lock(Hooks())
    /// The hooks, read whole: a closure read out of the lock on its own comes back wrapped
    /// in a new thunk (an allocation per request); a struct's fields are read as they are.
    private var currentHooks: Hooks { hooks.withLock { $0 } }

    private struct Hooks {
        /// Told after a write changed what a bond keeps of the client (a CCCD, Client
        /// Supported Features), before it is answered; and, on a task of its own, when a
        /// request made it change-aware.
        var clientStateChanged: (@Sendable (ATTServerContext) -> Void)?
        /// Told before each request or command is admitted.
        var admitting: (@Sendable (ATTServerContext) -> Void)?
    }

    init(store: GATTServerStore, report: @escaping @Sendable (PeripheralManagerEvent) -> Void) {
        self.store = store
        self.report = report
    }

    /// Sets the manager's hooks, once.
    func setHooks(
        clientStateChanged: @escaping @Sendable (ATTServerContext) -> Void, admitting: @escaping @Sendable (ATTServerContext) -> Void
    ) {
        hooks.withLock { $0 = Hooks(clientStateChanged: clientStateChanged, admitting: admitting) }
    }

    func attributes(in range: ClosedRange<UInt16>, limit: Int) -> [ATTAttribute] { store.attributes(in: range, limit: limit) }

    func attribute(at handle: UInt16) -> ATTAttribute? { store.attribute(at: handle) }

    func authorize(_ attribute: ATTAttribute, operation: ATTOperation, context: ATTServerContext) async -> ATTErrorCode? {
        await store.authorize(attribute, operation: operation, context: context)
    }

    func storedValue(_ attribute: ATTAttribute, context: ATTServerContext) -> Result<[UInt8], ATTErrorCode>? {
        store.storedValue(attribute, context: context).map { reported($0, attribute, context) }
    }

    func read(_ attribute: ATTAttribute, context: ATTServerContext) async -> Result<[UInt8], ATTErrorCode> {
        reported(await store.read(attribute, context: context), attribute, context)
    }

    /// A characteristic value read is told to the application.
    private func reported(_ result: Result<[UInt8], ATTErrorCode>, _ attribute: ATTAttribute, _ context: ATTServerContext) -> Result<[UInt8], ATTErrorCode> {
        if case .success = result, case let request = request(attribute.handle, context), request.valueHandle == attribute.handle {
            report(.read(request))
        }
        return result
    }

    func write(_ attribute: ATTAttribute, value: [UInt8], kind: ATTWriteKind, context: ATTServerContext) async -> ATTErrorCode? {
        let error = await store.write(attribute, value: value, kind: kind, context: context)
        guard error == nil else { return error }
        let request = request(attribute.handle, context)
        if attribute.type == GATTUUID.clientCharacteristicConfiguration,
            let configuration = try? ClientCharacteristicConfiguration(bytes: value)
        {
            let wanted = configuration.intersection([.notification, .indication])
            report(wanted.isEmpty ? .unsubscribed(request) : .subscribed(request, wanted))
            currentHooks.clientStateChanged?(context)
        } else {
            report(.wrote(request, value: value, withResponse: kind != .command))
            if attribute.type == GATTUUID.clientSupportedFeatures { currentHooks.clientStateChanged?(context) }
        }
        return nil
    }

    func admit(_ request: ATTPDU, context: ATTServerContext) -> ATTErrorCode? {
        currentHooks.admitting?(context)
        let (error, becameAware) = store.admitNotingAwareness(request, context: context)
        // Change-aware is part of what a bonded client's saved state records: else it would
        // come back change-unaware, and be sent Database Out Of Sync, at every reconnection.
        // Saved on a task: a read is admitted and answered on the bearer's thread, the one
        // that reads the controller, and a save writes and syncs the bond file.
        if becameAware, let changed = currentHooks.clientStateChanged { Task { changed(context) } }
        return error
    }

    func bearerClosed(_ context: ATTServerContext) { store.bearerClosed(context) }

    func acceptsMultipleNotifications(_ context: ATTServerContext) -> Bool { store.acceptsMultipleNotifications(context) }

    /// The request naming `handle`, with the characteristic it belongs to when it is a
    /// characteristic's value or descriptor.
    private func request(_ handle: UInt16, _ context: ATTServerContext) -> PeripheralManager.Request {
        var request = PeripheralManager.Request(bearer: context.bearer, central: context.peer, handle: handle)
        for service in store.database.services where service.handles.contains(handle) {
            for characteristic in service.characteristics where (characteristic.valueHandle...characteristic.endHandle).contains(handle) {
                request.characteristic = characteristic.uuid
                request.valueHandle = characteristic.valueHandle
            }
        }
        return request
    }
}
