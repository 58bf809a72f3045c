import ATT
import BluetoothCore
import HCI
import SMP

/// What a trace adds up to, per connection and per advertiser, from decoded packets fed in
/// order (`bareble-trace stats`): no I/O, no clock, fixed memory whatever the capture's
/// length. At most ``maximumConnections`` connections and ``maximumAdvertisers``
/// advertisers are kept; past either, the oldest entry (the first seen) is forgotten and
/// counted (``forgottenConnections``, ``forgottenAdvertisers``). Round trips go into a
/// ``LatencyHistogram``, never a list.
public struct TraceStatistics: Sendable {
    public static let maximumConnections = 256
    public static let maximumAdvertisers = 1024

    public struct Traffic: Sendable, Equatable {
        public var packets = 0
        /// ACL data bytes: the L2CAP bytes after the 4-byte HCI ACL header.
        public var bytes = 0

        public init(packets: Int = 0, bytes: Int = 0) {
            self.packets = packets
            self.bytes = bytes
        }
    }

    /// One connection, from its Connection Complete (or its first packet when the capture
    /// began later) to its Disconnection Complete (or the end of the capture).
    public struct Connection: Sendable {
        public var index: UInt16
        public var handle: UInt16
        /// From the Connection Complete; nil when the capture began after it.
        public var peer: DeviceAddress?
        public var first: Int64
        public var last: Int64
        /// Set at the Disconnection Complete.
        public var disconnectReason: HCIErrorCode?
        /// Host to controller, controller to host.
        public var sent = Traffic()
        public var received = Traffic()
        /// Requests answered (responses and Error Responses joined to their request).
        public var transactions = LatencyHistogram()
        public var notifications = 0
        public var indications = 0
        /// ATT Error Responses, by code.
        public var attErrors: [ATTErrorCode: Int] = [:]
        /// Encryption Change events that turned encryption on, that failed (a status other
        /// than success), and key refreshes.
        public var encryptionEnabled = 0
        public var encryptionFailed = 0
        public var keyRefreshes = 0
        /// Pairing Requests seen; pairings ended by encryption being turned on, by a Pairing
        /// Failed (by reason), and those the link ended in the middle of.
        public var pairingAttempts = 0
        public var pairingCompleted = 0
        public var pairingFailures: [PairingFailedReason: Int] = [:]
        public var pairingUnfinished = 0
        var pairing = false

        /// Microseconds from the first packet to the last.
        public var duration: Int64 { elapsed(from: first, to: last) }
        public var attErrorCount: Int { attErrors.values.reduce(0, +) }
    }

    public struct Advertiser: Sendable {
        public var index: UInt16
        public var address: BluetoothAddress
        public var addressType: ReportedAddressType
        public var reports = 0
        /// Reports that gave an RSSI (127 means none).
        public var rssiMinimum: Int8?
        public var rssiMaximum: Int8?
        /// Advertisements (scan responses not counted: they answer our scan request, not
        /// the advertiser's interval), first and last time.
        public var advertisements = 0
        public var firstAdvertisement: Int64 = 0
        public var lastAdvertisement: Int64 = 0

        /// The mean time between advertisements seen, in microseconds; nil below two. What a
        /// scanner sees: an advertisement it missed lengthens it.
        public var meanInterval: Int64? {
            advertisements < 2 ? nil : elapsed(from: firstAdvertisement, to: lastAdvertisement) / Int64(advertisements - 1)
        }
    }

    struct Link: Hashable { var index: UInt16, handle: UInt16 }
    struct Station: Hashable { var index: UInt16, address: BluetoothAddress }

    public private(set) var connections: [Connection] = []
    public private(set) var advertisers: [Advertiser] = []
    public private(set) var packets = 0
    public private(set) var first: Int64?
    public private(set) var last: Int64?
    public private(set) var forgottenConnections = 0
    public private(set) var forgottenAdvertisers = 0
    /// The open connection of each link, and each advertiser's entry, by serial number:
    /// the position in ``connections`` or ``advertisers`` plus the entries forgotten before.
    private var open: [Link: Int] = [:]
    private var stations: [Station: Int] = [:]

    public init() {}

    public mutating func add(_ packet: TracePacket) {
        packets += 1
        if first == nil { first = packet.timestamp }
        last = packet.timestamp
        switch packet.decoded {
        case let .event(event)?:
            add(event, packet)
        case let .att(pdu, _)?:
            if let at = connection(packet) { count(pdu, packet, in: at) }
        case let .smp(pdu)?:
            if let at = connection(packet) {
                switch pdu {
                case .pairingRequest:
                    connections[at].pairingAttempts += 1
                    connections[at].pairing = true
                case let .pairingFailed(reason):
                    connections[at].pairingFailures[reason, default: 0] += 1
                    connections[at].pairing = false
                default:
                    break
                }
            }
        case nil:
            break
        }
        if packet.kind == "acl", let at = connection(packet) {
            let bytes = max(0, packet.length - 4)
            if packet.direction == .sent {
                connections[at].sent.packets += 1
                connections[at].sent.bytes += bytes
            } else {
                connections[at].received.packets += 1
                connections[at].received.bytes += bytes
            }
        }
    }

    private mutating func count(_ pdu: ATTPDU, _ packet: TracePacket, in at: Int) {
        switch pdu {
        case .handleValueNotification, .multipleHandleValueNotification: connections[at].notifications += 1
        case .handleValueIndication: connections[at].indications += 1
        case let .errorResponse(error): connections[at].attErrors[error.errorCode, default: 0] += 1
        default: break
        }
        if let answers = packet.answers, pdu.opcode.kind == .response {
            connections[at].transactions.add(answers.microseconds)
        }
    }

    private mutating func add(_ event: HCIEvent, _ packet: TracePacket) {
        switch event {
        case let .le(.connectionComplete(complete)) where complete.status == .success:
            connected(Link(index: packet.index, handle: complete.connectionHandle), complete.peerAddress, complete.peerAddressType, at: packet.timestamp)
        case let .le(.enhancedConnectionComplete(complete)) where complete.status == .success:
            connected(Link(index: packet.index, handle: complete.connectionHandle), complete.peerAddress, complete.peerAddressType, at: packet.timestamp)
        case let .disconnectionComplete(disconnection) where disconnection.status == .success:
            let link = Link(index: packet.index, handle: disconnection.connectionHandle)
            guard let serial = open.removeValue(forKey: link) else { return }
            let at = serial - forgottenConnections
            connections[at].last = packet.timestamp
            connections[at].disconnectReason = disconnection.reason
            if connections[at].pairing {
                connections[at].pairingUnfinished += 1
                connections[at].pairing = false
            }
        case let .encryptionChange(change):
            guard let at = connection(packet) else { return }
            if change.status != .success {
                connections[at].encryptionFailed += 1
            } else if change.isEncrypted {
                connections[at].encryptionEnabled += 1
                if connections[at].pairing {
                    connections[at].pairingCompleted += 1
                    connections[at].pairing = false
                }
            }
        case let .encryptionKeyRefreshComplete(refresh):
            if refresh.status == .success, let at = connection(packet) { connections[at].keyRefreshes += 1 }
        case let .le(.advertisingReport(report)):
            for entry in report.reports {
                heard(Station(index: packet.index, address: entry.address), entry.addressType, rssi: entry.availableRSSI,
                      advertisement: entry.eventType != .scanRsp, at: packet.timestamp)
            }
        case let .le(.extendedAdvertisingReport(report)):
            for entry in report.reports where entry.addressType != .anonymous {
                heard(Station(index: packet.index, address: entry.address), entry.addressType, rssi: entry.availableRSSI,
                      advertisement: !entry.eventType.contains(.scanResponse), at: packet.timestamp)
            }
        default:
            break
        }
    }

    /// The connection a packet belongs to, opened at its first packet when the capture
    /// holds no Connection Complete for it; its last time moved on.
    private mutating func connection(_ packet: TracePacket) -> Int? {
        guard let handle = packet.connection else { return nil }
        let link = Link(index: packet.index, handle: handle)
        let at = open[link].map { $0 - forgottenConnections }
            ?? opened(Connection(index: link.index, handle: handle, first: packet.timestamp, last: packet.timestamp), on: link)
        connections[at].last = packet.timestamp
        return at
    }

    private mutating func connected(_ link: Link, _ peer: BluetoothAddress, _ type: ReportedAddressType, at time: Int64) {
        // A handle reused without a Disconnection Complete seen: the old connection ended.
        open[link] = nil
        let kind: AddressType = type.rawValue & 1 == 0 ? .public : .random
        _ = opened(Connection(index: link.index, handle: link.handle, peer: DeviceAddress(peer, type: kind), first: time, last: time), on: link)
    }

    private mutating func opened(_ connection: Connection, on link: Link) -> Int {
        if connections.count == Self.maximumConnections {
            let gone = connections.removeFirst()
            let goneLink = Link(index: gone.index, handle: gone.handle)
            if open[goneLink] == forgottenConnections { open[goneLink] = nil }
            forgottenConnections += 1
        }
        connections.append(connection)
        open[link] = forgottenConnections + connections.count - 1
        return connections.count - 1
    }

    private mutating func heard(_ station: Station, _ type: ReportedAddressType, rssi: Int8?, advertisement: Bool, at time: Int64) {
        let at: Int
        if let serial = stations[station] {
            at = serial - forgottenAdvertisers
        } else {
            if advertisers.count == Self.maximumAdvertisers {
                let gone = advertisers.removeFirst()
                stations[Station(index: gone.index, address: gone.address)] = nil
                forgottenAdvertisers += 1
            }
            advertisers.append(Advertiser(index: station.index, address: station.address, addressType: type))
            at = advertisers.count - 1
            stations[station] = forgottenAdvertisers + at
        }
        advertisers[at].reports += 1
        if let rssi {
            advertisers[at].rssiMinimum = min(advertisers[at].rssiMinimum ?? rssi, rssi)
            advertisers[at].rssiMaximum = max(advertisers[at].rssiMaximum ?? rssi, rssi)
        }
        if advertisement {
            if advertisers[at].advertisements == 0 { advertisers[at].firstAdvertisement = time }
            advertisers[at].lastAdvertisement = time
            advertisers[at].advertisements += 1
        }
    }
}
