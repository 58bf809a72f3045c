import BluetoothCore

/// One running advertisement, as ``Advertiser/start(_:data:scanResponse:)`` set it up.
/// Stop it with ``stop()``; dropping the value does not stop it (the controller keeps
/// advertising until told otherwise, as a beacon tool wants).
public final class AdvertisingSet: Sendable {
    /// Whether the set is on the air, and if not, why.
    public enum State: Sendable, Equatable {
        case advertising
        /// Stopped by ``stop()`` (or a start that failed half way).
        case stopped
        /// The controller ended it.
        case ended(Ending)
    }

    public enum Ending: Sendable, Equatable {
        /// A central connected; connectable advertising stops then (Core Vol 6 Part B 4.4.2).
        case connected(connectionHandle: UInt16)
        /// The duration or event limit ran out (Advertising Timeout 0x3C, Limit Reached
        /// 0x43) or the controller gave up with this status.
        case controllerStopped(HCIErrorCode)
        /// A hardware error reset the controller, which forgets every set. Start again once
        /// ``HCIController/statusUpdates()`` reports `.ready`.
        case controllerReset(hardwareCode: UInt8)
    }

    let advertiser: Advertiser
    let id: UInt64
    let slot: Advertiser.Slot
    let plan: AdvertisingPlan

    /// The address scanners see.
    public let address: DeviceAddress
    /// The Advertising_Handle on controllers with extended advertising; nil on legacy ones.
    public var handle: UInt8? { plan.extendedCommands ? slot.handle : nil }
    /// True when the set sends legacy PDUs (ADV_IND, ADV_SCAN_IND, ADV_NONCONN_IND).
    public var usesLegacyPDUs: Bool { plan.legacyPDUs }
    public var parameters: AdvertisingParameters { plan.parameters }
    /// The minimum interval the controller was given, after rounding to 0.625 ms units.
    public var interval: Duration {
        AdvertisingTime.duration(units: plan.intervalMinimum, unitNanoseconds: AdvertisingTime.intervalUnitNanoseconds)
    }
    /// The TX power the controller selected (dBm), as LE Set Extended Advertising
    /// Parameters returned it; nil with legacy commands, which do not report it.
    public let selectedTxPower: Int8?

    init(advertiser: Advertiser, id: UInt64, slot: Advertiser.Slot, address: DeviceAddress, plan: AdvertisingPlan, selectedTxPower: Int8?) {
        self.advertiser = advertiser
        self.id = id
        self.slot = slot
        self.address = address
        self.plan = plan
        self.selectedTxPower = selectedTxPower
    }

    deinit { advertiser.forget(id: id) }

    public var state: State { advertiser.currentState(id: id, slot: slot) }

    /// The advertising data on the air now (after any ``update(data:scanResponse:)``).
    public var data: AdvertisingData {
        AdvertisingData((advertiser.currentPlan(id: id, slot: slot) ?? plan).data)
    }

    /// Disables the set, and removes it from a controller with extended advertising.
    /// Stopping a set that already stopped or ended does nothing.
    public func stop() async throws(AdvertisingError) {
        try await advertiser.stop(id: id, slot: slot)
    }

    /// Replaces the data and scan response of a running set, with the same limits as at
    /// start and the same PDU format. Extended data over 251 bytes briefly disables the set,
    /// since controllers take fragments only while a set is disabled.
    public func update(data: AdvertisingData, scanResponse: AdvertisingData? = nil) async throws(AdvertisingError) {
        try await advertiser.update(id: id, slot: slot, data: data.bytes, scanResponse: scanResponse?.bytes)
    }
}
