/// Which of a device's repeated advertisements one consumer receives. Applied on the host,
/// per consumer, because the controller's own duplicate filter is all or nothing for
/// every consumer and hides RSSI changes.
public enum DuplicatePolicy: Sendable, Hashable {
    /// Every advertisement.
    case all
    /// The first advertisement of each device (again after the device was forgotten,
    /// see ``ScanFilter/trackedDeviceLimit``).
    case firstPerDevice
    /// When the advertising data or scan response differs from the last one delivered.
    case whenDataChanges
    /// When the RSSI moved by more than `rssiDelta` dB from the last one delivered, or
    /// `interval` has passed since then, measured with the advertisements' timestamps.
    case whenRSSIChanges(byMoreThan: Int, orEvery: Duration)
}
