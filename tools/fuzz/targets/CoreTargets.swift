import BluetoothCore

/// Text a user types: UUIDs (`--service 180D`).
enum CoreTargets {
    /// Any bytes as UTF-8 text (invalid sequences repaired): a UUID or nil, and a UUID's
    /// printed forms parse back to it.
    @Sendable static func uuidText(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let uuid = BluetoothUUID(text) else { return }
        expect(BluetoothUUID(uuid.description) == uuid, "\(text) prints as \(uuid.description), which parses differently")
        expect(BluetoothUUID(uuid.uuidString128) == uuid, "\(text): 128-bit form does not parse back")
    }
}
