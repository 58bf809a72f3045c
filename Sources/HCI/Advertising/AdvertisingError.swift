import BluetoothCore

/// Why advertising could not start, change or stop. Everything the caller can get wrong is
/// found before a single command goes to the controller.
public enum AdvertisingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `what` ("advertising data", "scan response data") is longer than the PDUs chosen
    /// can carry.
    case dataTooLong(what: String, length: Int, limit: Int)
    /// The interval, after rounding to 0.625 ms units, is outside what the commands allow.
    case intervalOutOfRange(requested: Duration, allowed: ClosedRange<Duration>, legacy: Bool)
    /// The maximum interval is shorter than the minimum.
    case intervalsReversed(minimum: Duration, maximum: Duration)
    /// Connectable advertising with extended PDUs cannot be scannable (Core Vol 4 Part E
    /// 7.8.53), so it has no scan response.
    case connectableExtendedCannotBeScannable
    /// A non-connectable, non-scannable set has no scan response to send.
    case scanResponseNotAllowed(AdvertisingParameters.Kind)
    /// A scannable set with extended PDUs carries its data only in the scan response
    /// (Core Vol 6 Part B 2.3.4.5: AUX_ADV_IND of a scannable event has no AdvData).
    case extendedScannableNeedsScanResponseOnly
    /// Something only extended advertising commands can express, on a controller without
    /// them.
    case requiresExtendedAdvertising(String)
    /// A parameter outside its range; the text names it and the range.
    case invalidParameter(String)
    /// The controller has one legacy advertising set and it is in use.
    case legacySetInUse
    /// Every advertising handle the controller offers is in use.
    case noFreeAdvertisingSet(limit: Int)
    /// ``HCIController/powerOn()`` has not completed, so the controller's limits are unknown.
    case controllerNotReady
    /// The set was stopped (by the caller, the controller, or a controller reset).
    case setNotActive
    /// The controller refused a command or did not answer.
    case controller(HCIError)

    public var description: String {
        switch self {
        case let .dataTooLong(what, length, limit) where limit <= LegacyAdvertisingPayload.capacity:
            return "\(what) is \(length) bytes but legacy advertising carries at most \(limit): shorten it or use extended advertising"
        case let .dataTooLong(what, length, limit):
            return "\(what) is \(length) bytes but this controller's extended advertising carries at most \(limit): shorten it"
        case let .intervalOutOfRange(requested, allowed, legacy):
            let which = legacy ? "legacy" : "extended"
            return "advertising interval \(AdvertisingTime.text(requested)) is outside \(AdvertisingTime.text(allowed.lowerBound)) ... \(AdvertisingTime.text(allowed.upperBound)) for \(which) advertising: choose one in that range"
        case let .intervalsReversed(minimum, maximum):
            return "the maximum advertising interval \(AdvertisingTime.text(maximum)) is shorter than the interval \(AdvertisingTime.text(minimum)): make it at least as long"
        case .connectableExtendedCannotBeScannable:
            return "connectable advertising with extended PDUs cannot be scannable, so it has no scan response: drop the scan response, or use legacy PDUs (31 bytes each)"
        case let .scanResponseNotAllowed(kind):
            return "\(kind) advertising is not scannable, so it sends no scan response: drop the scan response or advertise as scannable"
        case .extendedScannableNeedsScanResponseOnly:
            return "scannable advertising with extended PDUs carries its data only in the scan response: pass empty advertising data and the data as scan response, or use legacy PDUs"
        case let .requiresExtendedAdvertising(what):
            return "\(what) needs extended advertising, which this controller does not have: leave it out"
        case let .invalidParameter(what):
            return what
        case .legacySetInUse:
            return "this controller has only legacy advertising, whose single set is already advertising: stop that set first"
        case let .noFreeAdvertisingSet(limit):
            return "all \(limit) advertising sets of this controller are in use: stop one first"
        case .controllerNotReady:
            return "the controller is not powered on: call powerOn() before advertising"
        case .setNotActive:
            return "this advertising set has stopped: start a new one"
        case let .controller(error):
            return "advertising failed: \(error)"
        }
    }
}
