import ATT
import BluetoothCore
import HCI
import HCITransport
import SMP

/// One capture record as the trace shows it: where it crossed, what it is at every layer
/// the decoder reached, a one-line summary and the fields behind it.
public struct TracePacket: Sendable {
    public enum Direction: String, Sendable, Hashable {
        /// Host to controller (btmon's "<").
        case sent
        /// Controller to host (btmon's ">").
        case received
        /// A note of the monitor channel (index added, system note, ...).
        case note
    }

    /// The protocol layers `--protocol` selects by.
    public enum Layer: String, Sendable, Hashable, CaseIterable {
        case hci, l2cap, att, smp, adv
    }

    /// The layers a packet reached: a bit each, as every packet carries one (a `Set` cost a
    /// hash table per packet).
    public struct Layers: OptionSet, Sendable, Hashable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public init(_ layer: Layer) {
            let bit: UInt8 = switch layer {
            case .hci: 1
            case .l2cap: 2
            case .att: 4
            case .smp: 8
            case .adv: 16
            }
            self.init(rawValue: bit)
        }

        public static let hci = Layers(.hci)
        public static let l2cap = Layers(.l2cap)
        public static let att = Layers(.att)
        public static let smp = Layers(.smp)
        public static let adv = Layers(.adv)
    }

    /// The decoded value behind a packet, for what sums packets up (``TraceStatistics``,
    /// ``TraceGATTDatabase``) without reading text back. The decoder made it anyway; the
    /// packet holds it at the cost of a reference (its arrays are not copied).
    public enum Decoded: Sendable {
        case event(HCIEvent)
        /// An ATT PDU, and for a response or confirmation the request or indication it
        /// was joined to.
        case att(ATTPDU, answering: ATTPDU?)
        case smp(SMPPDU)
    }

    public var number: Int
    /// What the record is, in the monitor channel's numbering (2 command, 3 event, 4/5 ACL
    /// sent/received, 0 New Index, 12 system note, ...), whatever the capture's format.
    public var record: UInt16 = 0
    /// Microseconds since the Unix epoch.
    public var timestamp: Int64
    public var index: UInt16
    public var direction: Direction
    /// "command", "event", "acl", "sco", "iso", or the monitor note's kind ("new-index", ...).
    public var kind: String
    /// The command's opcode, or for Command Complete/Status the opcode it answers.
    public var opcode: UInt16?
    public var event: UInt8?
    public var subevent: UInt8?
    public var connection: UInt16?
    /// L2CAP channel, on the record that completed the PDU.
    public var channel: UInt16?
    public var attOpcode: UInt8?
    public var attHandle: UInt16?
    public var smpCode: UInt8?
    public var layers: Layers = .hci
    /// The record's bytes (the HCI packet without its H4 indicator).
    public var length = 0
    public var decoded: Decoded?
    /// The deepest layer's name ("ATT Read Request", "LE Set Scan Enable", ...).
    public var name: String
    /// What follows the name on the one-line view.
    public var summary: String = ""
    /// Label and value pairs, in order, for `-v` and JSON.
    public var fields: [(String, String)] = []
    /// For an ATT response, error or confirmation: the packet number of the request it
    /// answers and the round trip in microseconds.
    public var answers: (number: Int, microseconds: Int64)?
    /// Device addresses the packet names (connection peers, advertisers), for `--address`.
    public var addresses: [BluetoothAddress] = []
    /// An identity a device distributed over SMP (Identity Information, then Identity
    /// Address Information on the same connection and direction), on the packet that
    /// completed it, for ``AddressFilter`` to resolve the device's private addresses with.
    /// Present whatever `showKeys` says: it is never printed.
    public var exchangedIdentity: ExchangedIdentity?
    /// Why the decoder stopped early (a malformed or truncated PDU), shown with the hex.
    public var problem: String?
    public var hex: [UInt8] = []

    public init(number: Int, timestamp: Int64, index: UInt16, direction: Direction, kind: String, name: String) {
        self.number = number
        self.timestamp = timestamp
        self.index = index
        self.direction = direction
        self.kind = kind
        self.name = name
    }
}

/// An IRK and the identity address it belongs to.
public struct ExchangedIdentity: Sendable, Hashable {
    public var irk: SMPValue128
    public var address: BluetoothAddress

    public init(irk: SMPValue128, address: BluetoothAddress) {
        self.irk = irk
        self.address = address
    }
}
