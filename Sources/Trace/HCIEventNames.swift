import BluetoothCore

/// Event and LE subevent names (Core 5.4 Vol 4 Part E 7.7, 7.7.65), for every code a
/// trace may meet, including those the stack does not model.
enum HCIEventNames {
    static func event(_ code: UInt8) -> String {
        switch code {
        case 0x01: "Inquiry Complete"
        case 0x03: "Connection Complete"
        case 0x05: "Disconnection Complete"
        case 0x08: "Encryption Change"
        case 0x0C: "Read Remote Version Information Complete"
        case 0x0E: "Command Complete"
        case 0x0F: "Command Status"
        case 0x10: "Hardware Error"
        case 0x13: "Number Of Completed Packets"
        case 0x1A: "Data Buffer Overflow"
        case 0x30: "Encryption Key Refresh Complete"
        case 0x3E: "LE Meta"
        case 0x57: "Authenticated Payload Timeout Expired"
        case 0x59: "Encryption Change [v2]"
        case 0xFF: "Vendor"
        default: "Event 0x" + hex(code)
        }
    }

    static func subevent(_ code: UInt8) -> String {
        switch code {
        case 0x01: "LE Connection Complete"
        case 0x02: "LE Advertising Report"
        case 0x03: "LE Connection Update Complete"
        case 0x04: "LE Read Remote Features Complete"
        case 0x05: "LE Long Term Key Request"
        case 0x06: "LE Remote Connection Parameter Request"
        case 0x07: "LE Data Length Change"
        case 0x08: "LE Read Local P-256 Public Key Complete"
        case 0x09: "LE Generate DHKey Complete"
        case 0x0A: "LE Enhanced Connection Complete"
        case 0x0B: "LE Directed Advertising Report"
        case 0x0C: "LE PHY Update Complete"
        case 0x0D: "LE Extended Advertising Report"
        case 0x0E: "LE Periodic Advertising Sync Established"
        case 0x0F: "LE Periodic Advertising Report"
        case 0x10: "LE Periodic Advertising Sync Lost"
        case 0x11: "LE Scan Timeout"
        case 0x12: "LE Advertising Set Terminated"
        case 0x13: "LE Scan Request Received"
        case 0x14: "LE Channel Selection Algorithm"
        case 0x29: "LE Enhanced Connection Complete [v2]"
        default: "LE Subevent 0x" + hex(code)
        }
    }

    static func hex(_ byte: UInt8) -> String {
        Hex.string(CollectionOfOne(byte))
    }
}
