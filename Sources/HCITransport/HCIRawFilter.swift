import CBluetooth
import Glibc

/// Which packets the kernel copies to an `hci-raw:N` socket (struct hci_filter, applied in
/// the kernel before anything is queued for us). On a raw socket the kernel keeps the
/// adapter: its connections' ACL data and the events of its own work are none of our
/// business, and every packet that passes costs a copy and a wake-up.
public struct HCIRawFilter: Sendable, Hashable {
    /// Packet types to pass (HCIPacketType raw values: event 0x04, ACL 0x02, ...).
    public var packetTypes: Set<UInt8>
    /// Event codes to pass; nil passes every event.
    public var eventCodes: Set<UInt8>?

    public init(packetTypes: Set<UInt8>, eventCodes: Set<UInt8>?) {
        self.packetTypes = packetTypes
        self.eventCodes = eventCodes
    }

    /// What a host beside the kernel needs for scanning, advertising and commands: Command
    /// Complete and Command Status (the answers to our commands), LE Meta (advertising
    /// reports, advertising set terminated) and Hardware Error. No ACL: the kernel owns
    /// the data of its links.
    public static let hostSideLE = HCIRawFilter(
        packetTypes: [HCIPacketType.event.rawValue],
        eventCodes: [EventCode.commandComplete, EventCode.commandStatus, EventCode.leMeta, EventCode.hardwareError]
    )

    /// Every event and data packet, as `hcidump` sees them.
    public static let everything = HCIRawFilter(
        packetTypes: [HCIPacketType.event.rawValue, HCIPacketType.acl.rawValue, HCIPacketType.sco.rawValue, HCIPacketType.iso.rawValue],
        eventCodes: nil
    )

    /// The event codes `hostSideLE` names (Core 5.4 Vol 4 Part E 7.7); kept here rather than
    /// taken from HCI, which sits above this module.
    enum EventCode {
        static let commandComplete: UInt8 = 0x0E
        static let commandStatus: UInt8 = 0x0F
        static let hardwareError: UInt8 = 0x10
        static let leMeta: UInt8 = 0x3E
    }

    /// Whether the kernel would pass a packet of `type` whose event code is `eventCode`
    /// (nil for data packets): the same decision `kernelValue` encodes, for tests.
    public func passes(type: UInt8, eventCode: UInt8?) -> Bool {
        guard packetTypes.contains(type) else { return false }
        guard let eventCode, let eventCodes else { return true }
        return eventCodes.contains(eventCode)
    }

    var kernelValue: hci_filter {
        var filter = hci_filter()
        bareble_hci_filter_clear(&filter)
        for type in packetTypes { bareble_hci_filter_set_ptype(Int32(type), &filter) }
        if let eventCodes {
            for code in eventCodes { bareble_hci_filter_set_event(Int32(code), &filter) }
        } else {
            bareble_hci_filter_all_events(&filter)
        }
        return filter
    }
}
