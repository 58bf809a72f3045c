import BluetoothCore

/// Starts and stops advertising sets on one controller (Core Vol 4 Part E 7.8.4 - 7.8.9
/// legacy, 7.8.52 - 7.8.60 extended; Vol 6 Part B 4.4.2).
///
/// - A controller that supports LE Set Extended Advertising Parameters gets only extended
///   commands (controllers refuse to mix the two families on one power cycle); its sets
///   use legacy or extended PDUs as ``AdvertisingParameters/pduFormat`` decides, several at
///   once up to Num_Supported_Advertising_Sets.
/// - A legacy controller has one set; a second start while it advertises is
///   ``AdvertisingError/legacySetInUse``.
/// - Everything checkable is checked before the first command goes out.
/// - When the controller ends a set (a connection was made from it, its duration or event
///   count ran out) or reports a hardware error (after which the driver resets it), the
///   set is reported ended in ``AdvertisingSet/state`` and its handle is free again. Sets
///   are *not* re-established after a hardware error: the controller's reset may have
///   come from the advertising itself, and the caller knows whether it still wants it.
public final class Advertiser: Sendable {
    public let controller: HCIController
    /// The random static address used by sets that ask for ``AdvertisingParameters/OwnAddress/randomStatic``:
    /// one per advertiser, so all such sets and restarts show the same device.
    public let randomStaticAddress: BluetoothAddress

    let state = Lock(State())

    /// Where a set lives on the controller: the single legacy set, or an extended handle.
    enum Slot: Hashable, Sendable {
        case legacy
        case handle(UInt8)

        var handle: UInt8 { if case let .handle(value) = self { value } else { 0 } }
    }

    struct Record: Sendable {
        let id: UInt64
        var plan: AdvertisingPlan
        var stopping = false
    }

    struct State: Sendable {
        var nextID: UInt64 = 1
        var records: [Slot: Record] = [:]
        /// Why sets that no longer advertise ended, until their ``AdvertisingSet`` goes away.
        var endings: [UInt64: AdvertisingSet.State] = [:]
        var subscription: Subscription?
    }

    /// - Parameter randomStaticAddress: the address for sets that advertise with a random
    ///   static address; a fresh one (Core Vol 6 Part B 1.3.2.1) when nil.
    public init(controller: HCIController, randomStaticAddress: BluetoothAddress? = nil) {
        self.controller = controller
        self.randomStaticAddress = randomStaticAddress ?? .randomStatic()
        let subscription = controller.subscribe { [weak self] event in self?.handle(event) }
        state.withLock { $0.subscription = subscription }
    }

    deinit { state.withLock { $0.subscription?.cancel() } }

    /// Configures and enables one advertising set.
    ///
    /// Legacy PDUs carry at most 31 bytes of data and 31 of scan response; extended PDUs
    /// up to the controller's Maximum Advertising Data Length, sent in 251-byte fragments.
    /// A connectable set with legacy PDUs (ADV_IND) is also scannable: `scanResponse` is
    /// what active scanners get back.
    public func start(
        _ parameters: AdvertisingParameters, data: AdvertisingData, scanResponse: AdvertisingData? = nil
    ) async throws(AdvertisingError) -> AdvertisingSet {
        guard let info = controller.info else { throw .controllerNotReady }
        let capabilities = AdvertisingCapabilities(info)
        let plan = try AdvertisingPlan(parameters, data: data.bytes, scanResponse: scanResponse?.bytes, capabilities: capabilities)
        let address: DeviceAddress
        let randomAddress: BluetoothAddress?
        switch parameters.ownAddress {
        case .public:
            address = DeviceAddress(info.address, type: .public)
            randomAddress = nil
        case .randomStatic:
            address = DeviceAddress(randomStaticAddress, type: .random)
            randomAddress = randomStaticAddress
        case let .random(chosen):
            address = DeviceAddress(chosen, type: .random)
            randomAddress = chosen
        }

        let (slot, id) = try reserve(plan, capabilities: capabilities)
        let setup: [any HCICommand]
        let enable: any HCICommand
        do {
            setup = try plan.setupCommands(handle: slot.handle, randomAddress: randomAddress)
            enable = try plan.enableCommand(handle: slot.handle)
        } catch {
            release(slot, id: id)
            throw error
        }

        var selectedTxPower: Int8?
        var created = false
        do throws(HCIError) {
            for command in setup {
                if let extended = command as? LESetExtendedAdvertisingParameters {
                    selectedTxPower = try await controller.send(extended).selectedTxPower
                    created = true
                } else {
                    try await send(command)
                }
            }
            try await send(enable)
        } catch {
            await abandon(slot, id: id, created: created, after: error)
            throw .controller(error)
        }
        return AdvertisingSet(
            advertiser: self, id: id, slot: slot, address: address, plan: plan,
            selectedTxPower: selectedTxPower
        )
    }

    // MARK: Slots

    private func reserve(_ plan: AdvertisingPlan, capabilities: AdvertisingCapabilities) throws(AdvertisingError) -> (Slot, UInt64) {
        let result: Result<(Slot, UInt64), AdvertisingError> = state.withLock { state in
            let slot: Slot
            if capabilities.extendedCommands {
                guard let free = (0..<capabilities.numberOfSets).first(where: { state.records[.handle(UInt8($0))] == nil }) else {
                    return .failure(.noFreeAdvertisingSet(limit: capabilities.numberOfSets))
                }
                slot = .handle(UInt8(free))
            } else {
                guard state.records[.legacy] == nil else { return .failure(.legacySetInUse) }
                slot = .legacy
            }
            let id = state.nextID
            state.nextID += 1
            state.records[slot] = Record(id: id, plan: plan)
            return .success((slot, id))
        }
        return try result.get()
    }

    /// Frees a slot if it still belongs to set `id` (an event may have ended it already).
    func release(_ slot: Slot, id: UInt64, ending: AdvertisingSet.State? = nil) {
        state.withLock { state in
            guard state.records[slot]?.id == id else { return }
            state.records[slot] = nil
            if let ending, state.endings[id] == nil { state.endings[id] = ending }
        }
    }

    /// A start that failed half way: take down what was set up, unless the controller is
    /// gone or resetting anyway, then free the slot.
    private func abandon(_ slot: Slot, id: UInt64, created: Bool, after error: HCIError) async {
        switch error {
        case .hardwareError, .transportClosed: break
        default:
            if created { _ = try? await controller.send(LERemoveAdvertisingSet(advertisingHandle: slot.handle)) }
        }
        release(slot, id: id, ending: .stopped)
    }

    func send(_ command: any HCICommand) async throws(HCIError) {
        try await sendOne(command)
    }

    private func sendOne<Command: HCICommand>(_ command: Command) async throws(HCIError) {
        _ = try await controller.send(command)
    }

    // MARK: Set operations (through AdvertisingSet)

    func currentState(id: UInt64, slot: Slot) -> AdvertisingSet.State {
        state.withLock { state in
            if let ending = state.endings[id] { return ending }
            return state.records[slot]?.id == id ? .advertising : .stopped
        }
    }

    func currentPlan(id: UInt64, slot: Slot) -> AdvertisingPlan? {
        state.withLock { state in state.records[slot]?.id == id ? state.records[slot]?.plan : nil }
    }

    func stop(id: UInt64, slot: Slot) async throws(AdvertisingError) {
        let plan: AdvertisingPlan? = state.withLock { state in
            guard var record = state.records[slot], record.id == id, !record.stopping else { return nil }
            record.stopping = true
            state.records[slot] = record
            return record.plan
        }
        // Already stopped, ended by the controller, or being stopped: nothing left to do.
        guard let plan else { return }
        do throws(HCIError) {
            try await send(AdvertisingPlan.disableCommand(handle: slot.handle, extendedCommands: plan.extendedCommands))
            if plan.extendedCommands { try await send(LERemoveAdvertisingSet(advertisingHandle: slot.handle)) }
        } catch {
            // The set may still be on the air; keep its slot so a retry can stop it.
            state.withLock { state in
                if state.records[slot]?.id == id { state.records[slot]?.stopping = false }
            }
            throw .controller(error)
        }
        release(slot, id: id, ending: .stopped)
    }

    func update(id: UInt64, slot: Slot, data: [UInt8], scanResponse: [UInt8]?) async throws(AdvertisingError) {
        guard let old = currentPlan(id: id, slot: slot) else { throw .setNotActive }
        // Keep the PDUs the set started with: an update must not silently change who hears it.
        var parameters = old.parameters
        parameters.pduFormat = old.legacyPDUs ? .legacy : .extended
        let capabilities = AdvertisingCapabilities(
            extendedCommands: old.extendedCommands, maximumDataLength: old.maximumDataLength, numberOfSets: 1)
        let plan = try AdvertisingPlan(parameters, data: data, scanResponse: scanResponse, capabilities: capabilities)
        let commands = try plan.dataCommands(handle: slot.handle)
        let enable = try plan.enableCommand(handle: slot.handle)
        do throws(HCIError) {
            if plan.isFragmented {
                try await send(AdvertisingPlan.disableCommand(handle: slot.handle, extendedCommands: true))
                for command in commands { try await send(command) }
                try await send(enable)
            } else {
                for command in commands { try await send(command) }
            }
        } catch {
            throw .controller(error)
        }
        state.withLock { state in
            if state.records[slot]?.id == id { state.records[slot]?.plan = plan }
        }
    }

    func forget(id: UInt64) {
        _ = state.withLock { $0.endings.removeValue(forKey: id) }
    }

    // MARK: Controller events (on the transport's reader thread)

    private func handle(_ event: HCIEvent) {
        switch event {
        case let .hardwareError(error):
            // The driver resets the controller: every set is gone from it.
            state.withLock { state in
                for record in state.records.values where state.endings[record.id] == nil {
                    state.endings[record.id] = .ended(.controllerReset(hardwareCode: error.hardwareCode))
                }
                state.records = [:]
            }
        case let .le(.advertisingSetTerminated(terminated)):
            let ending: AdvertisingSet.Ending = terminated.status == .success
                ? .connected(connectionHandle: terminated.connectionHandle)
                : .controllerStopped(terminated.status)
            let slot = Slot.handle(terminated.advertisingHandle)
            let id: UInt64? = state.withLock { state in
                guard var record = state.records[slot], !record.stopping else { return nil }
                record.stopping = true
                state.records[slot] = record
                state.endings[record.id] = .ended(ending)
                return record.id
            }
            // The set is disabled but still exists on the controller: remove it before the
            // handle is used again, off the reader thread.
            if let id {
                Task { [weak self] in
                    guard let self else { return }
                    try? await self.send(LERemoveAdvertisingSet(advertisingHandle: slot.handle))
                    self.release(slot, id: id)
                }
            }
        case let .le(.connectionComplete(complete)) where complete.status == .success && complete.role == .peripheral:
            legacyConnected(handle: complete.connectionHandle)
        case let .le(.enhancedConnectionComplete(complete)) where complete.status == .success && complete.role == .peripheral:
            legacyConnected(handle: complete.connectionHandle)
        default:
            break
        }
    }

    /// A connection made from legacy advertising ends it (Core Vol 6 Part B 4.4.2.3); on
    /// extended controllers LE Advertising Set Terminated says which set instead.
    private func legacyConnected(handle: UInt16) {
        state.withLock { state in
            guard let record = state.records[.legacy], !record.stopping else { return }
            state.endings[record.id] = .ended(.connected(connectionHandle: handle))
            state.records[.legacy] = nil
        }
    }
}
