import ANCS
import BluetoothCore

/// What a Notification Provider sends, written from Apple's ANCS specification (not from
/// our encoder), for the tests to feed the consumer.
enum ANCSWire {
    /// A Get Notification Attributes answer: 0x00, UID, then ID, 2-octet length, value per attribute.
    static func notificationAnswer(uid: UInt32, _ attributes: [(UInt8, [UInt8])]) -> [UInt8] {
        var writer = ByteWriter()
        writer.write(UInt8(0))
        writer.write(uid)
        for (id, value) in attributes {
            writer.write(id)
            writer.write(UInt16(value.count))
            writer.write(contentsOf: value)
        }
        return writer.bytes
    }

    /// A Get App Attributes answer: 0x01, the NUL-terminated identifier, then the attributes.
    static func appAnswer(app: String, displayName: String) -> [UInt8] {
        var writer = ByteWriter()
        writer.write(UInt8(1))
        writer.write(contentsOf: app.utf8)
        writer.write(UInt8(0))
        writer.write(UInt8(0))
        writer.write(UInt16(displayName.utf8.count))
        writer.write(contentsOf: displayName.utf8)
        return writer.bytes
    }

    /// The eight attributes the session asks by default, as an iPhone answers them.
    static func fullAnswer(uid: UInt32, app: String = "com.apple.MobileSMS", title: String = "Ann", message: String = "hello") -> [UInt8] {
        notificationAnswer(uid: uid, [
            (0, Array(app.utf8)), (1, Array(title.utf8)), (2, []), (3, Array(message.utf8)),
            (4, Array(String(message.count).utf8)), (5, Array("20250102T030405".utf8)),
            (6, []), (7, Array("Clear".utf8)),
        ])
    }

    /// An answer cut the way iOS cuts it: MTU - 3 octets per notification, no header repeated.
    static func fragments(_ answer: [UInt8], mtu: Int = 185) -> [[UInt8]] {
        stride(from: 0, to: answer.count, by: mtu - 3).map { Array(answer[$0..<min($0 + mtu - 3, answer.count)]) }
    }

    static func event(_ kind: UInt8, uid: UInt32, category: UInt8 = 4, flags: UInt8 = 0, count: UInt8 = 1) -> [UInt8] {
        [kind, flags, category, count, UInt8(uid & 0xFF), UInt8(uid >> 8 & 0xFF), UInt8(uid >> 16 & 0xFF), UInt8(uid >> 24)]
    }
}
