import BluetoothCore

/// The payloads of the monitor channel's index and note records (BlueZ doc/btsnoop.txt,
/// the kernel's hci_mon.h): what tools print for "New Index" and "System Note".
extension MonitorRecord {
    /// New Index: an adapter appeared (or was there when the monitor opened).
    public struct NewIndex: Sendable, Hashable {
        /// Controller type: 0x00 primary, 0x01 AMP.
        public var type: UInt8
        /// Bus (HCI_VIRTUAL 0, HCI_USB 1, ... as in ``AdapterInfo/Bus``).
        public var bus: UInt8
        public var address: BluetoothAddress
        /// The kernel's name, "hci0".
        public var name: String

        public static let length = 16

        public init(decoding payload: [UInt8]) throws(DecodeError) {
            var reader = ByteReader(payload)
            type = try reader.readUInt8()
            bus = try reader.readUInt8()
            address = try BluetoothAddress(littleEndian: try reader.readBytes(6))
            let name = try reader.readBytes(8)
            try reader.expectEnd()
            self.name = String(decoding: name.prefix { $0 != 0 }, as: UTF8.self)
        }
    }

    /// The New Index payload, when this is one.
    public var newIndex: NewIndex? {
        opcode == .newIndex ? try? NewIndex(decoding: payload) : nil
    }

    /// The text of a System Note or User Logging record (NUL-terminated in the record).
    public var note: String? {
        guard opcode == .systemNote else { return nil }
        return String(decoding: payload.prefix { $0 != 0 }, as: UTF8.self)
    }
}
