import ATT
import BluetoothCore
import GATT
import HCI
import HCITransport
import L2CAP
import SMP

/// Turns capture records into ``TracePacket``s with the stack's own decoders at every
/// layer: HCI commands and events, ACL reassembled per connection and direction into
/// L2CAP, LE signaling, ATT (each request joined to its answer, handles named from the
/// discovery the trace itself holds), SMP (keys redacted unless asked) and advertising
/// reports with their AD structures.
///
/// Total: any record gives a packet; what does not decode keeps its hex and a `problem`.
/// State is bounded by what the controller allows: one reassembler and one outstanding
/// request per connection and direction, a name table per connection; at most
/// ``maximumConnections`` connections are tracked (more means a damaged or hostile
/// capture: the oldest is forgotten and counted).
///
/// A connection's state outlives its Disconnection Complete until a new connection takes
/// its handle (or room is needed for a new one: ended connections go first, uncounted). A
/// host that had not yet read that event can still send on the handle, typically the
/// answer to the peer's last request; such a packet is joined and named as on the live
/// link, and its summary says it came after the link ended (tshark joins it too, and flags
/// it as out of any connection).
public struct TraceDecoder: Sendable {
    public static let maximumConnections = 256
    /// The most handles one connection's name table keeps.
    public static let maximumNames = 4096

    public var showKeys: Bool
    /// List each packet's fields (`-v`, JSON with fields). Off, a packet costs no
    /// reflection: the identifying numbers, names and summary are still filled in.
    public var withFields: Bool
    /// Connections forgotten because ``maximumConnections`` were tracked.
    public private(set) var forgottenConnections = 0
    /// Connection sides whose state (a PDU being reassembled, a request waiting for its
    /// answer) was dropped to make room.
    public private(set) var forgottenSides = 0
    /// Connection sides with state held (a reassembler, an outstanding request, an IRK
    /// waiting for its identity address).
    public var trackedSides: Int { max(reassemblers.count, pending.count, identityKeys.count) }

    struct Link: Hashable { var index: UInt16, handle: UInt16 }
    struct Side: Hashable { var link: Link, received: Bool }
    struct Pending { var number: Int, timestamp: Int64, request: ATTPDU }
    /// Requests and indications are two flows (a response answers the one, a confirmation
    /// the other), each in order.
    struct Flow: Hashable { var side: Side, indications: Bool }
    /// A peer that breaks the one-outstanding rule may send this many before its answers;
    /// older ones are forgotten (counted in ``unjoinedRequests``).
    public static let maximumOutstanding = 32

    private var reassemblers: [Side: ACLReassembler] = [:]
    /// The requests (or indications) each side sent that no answer has come for, oldest
    /// first. An answer is joined to the latest: a client sends a request only after the
    /// previous one was answered or timed out, so an older one left here was never
    /// answered; a peer that pipelines has its answers joined latest first, as tshark does.
    private var pending: [Flow: [Pending]] = [:]
    /// Requests or indications forgotten unanswered past ``maximumOutstanding``.
    public private(set) var unjoinedRequests = 0
    private var names: [Link: [UInt16: String]] = [:]
    /// An IRK a side distributed, until its Identity Address Information names whose it is.
    private var identityKeys: [Side: SMPValue128] = [:]
    private var peers: [Link: BluetoothAddress] = [:]
    private var linkOrder: [Link] = []
    /// Connections whose Disconnection Complete was seen: the packet number of that event.
    private var ended: [Link: Int] = [:]

    public init(showKeys: Bool = false, withFields: Bool = true) {
        self.showKeys = showKeys
        self.withFields = withFields
    }

    private func fields(_ value: Any) -> [(String, String)] {
        withFields ? FieldList.of(value, showKeys: showKeys) : []
    }

    public mutating func decode(_ record: CaptureRecord) -> TracePacket {
        let payload = record.payload
        var packet = TracePacket(number: record.number, timestamp: record.timestamp, index: record.index, direction: .note, kind: "note", name: "")
        packet.record = record.opcode.rawValue
        packet.length = payload.count
        switch record.opcode {
        case .commandPacket:
            packet.direction = .sent
            packet.kind = "command"
            decodeCommand(payload, into: &packet)
        case .eventPacket:
            packet.direction = .received
            packet.kind = "event"
            decodeEvent(payload, into: &packet)
            // An event about a connection (encryption, parameters) is about its peer too.
            if packet.addresses.isEmpty, let handle = packet.connection, let peer = peers[Link(index: record.index, handle: handle)] {
                packet.addresses = [peer]
            }
        case .aclTransmit, .aclReceive:
            packet.direction = record.opcode == .aclReceive ? .received : .sent
            packet.kind = "acl"
            decodeACL(payload, index: record.index, into: &packet)
        case .scoTransmit, .scoReceive, .isoTransmit, .isoReceive:
            packet.direction = record.opcode == .scoReceive || record.opcode == .isoReceive ? .received : .sent
            packet.kind = record.opcode == .scoTransmit || record.opcode == .scoReceive ? "sco" : "iso"
            packet.hex = payload
            if payload.count >= 2 { packet.connection = (UInt16(payload[0]) | UInt16(payload[1]) << 8) & 0x0FFF }
        case .newIndex:
            packet.kind = "new-index"
            packet.name = record.opcode.description
            if let index = try? MonitorRecord.NewIndex(decoding: payload) {
                packet.summary = "\(index.name) \(index.address)"
                packet.addresses = [index.address]
            } else {
                packet.hex = payload
            }
        case .deleteIndex:
            packet.kind = "delete-index"
            packet.name = record.opcode.description
        case .systemNote:
            packet.kind = "system-note"
            packet.name = record.opcode.description
            packet.summary = String(decoding: payload.prefix { $0 != 0 }, as: UTF8.self)
        default:
            packet.name = record.opcode.description
            packet.hex = payload
        }
        return packet
    }

    // MARK: HCI

    private func decodeCommand(_ bytes: [UInt8], into packet: inout TracePacket) {
        guard bytes.count >= 3 else {
            packet.name = "HCI Command"
            packet.problem = "a command shorter than its 3-byte header"
            packet.hex = bytes
            return
        }
        let opcode = HCIOpcode(rawValue: UInt16(bytes[0]) | UInt16(bytes[1]) << 8)
        packet.opcode = opcode.rawValue
        packet.name = opcode.name
        let parameters = Array(bytes[3...])
        guard Int(bytes[2]) == parameters.count else {
            packet.problem = "parameter length \(bytes[2]) but \(parameters.count) bytes follow"
            packet.hex = parameters
            return
        }
        guard let type = HCICommands.type(for: opcode) else {
            packet.hex = parameters
            return
        }
        var reader = ByteReader(parameters)
        do {
            let command = try type.init(parameters: &reader)
            try reader.expectEnd()
            packet.fields = fields(command)
            if let address = FieldList.value("peerAddress", in: command) as? BluetoothAddress { packet.addresses = [address] }
        } catch {
            packet.problem = "\(error)"
            packet.hex = parameters
        }
    }

    private mutating func decodeEvent(_ bytes: [UInt8], into packet: inout TracePacket) {
        guard let code = bytes.first else {
            packet.name = "HCI Event"
            packet.problem = "an empty event"
            return
        }
        packet.event = code
        packet.name = HCIEventNames.event(code)
        if code == HCIEvent.Code.leMeta, bytes.count >= 3 {
            packet.subevent = bytes[2]
            packet.name = HCIEventNames.subevent(bytes[2])
        }
        let event: HCIEvent
        do {
            event = try HCIEvent(decoding: bytes)
        } catch {
            packet.problem = "\(error)"
            packet.hex = Array(bytes.dropFirst(2))
            return
        }
        packet.decoded = .event(event)
        switch event {
        case let .commandComplete(complete):
            packet.opcode = complete.opcode.rawValue
            packet.summary = complete.opcode.name
            if withFields {
                packet.fields = [("command", complete.opcode.name), ("numHCICommandPackets", "\(complete.numHCICommandPackets)")]
                if let status = complete.status { packet.fields.append(("status", "\(status)")) }
                packet.fields += returnParameters(of: complete)
            }
        case let .commandStatus(status):
            packet.opcode = status.opcode.rawValue
            packet.summary = "\(status.opcode.name): \(status.status)"
            packet.fields = fields(status)
        case let .disconnectionComplete(disconnection):
            packet.connection = disconnection.connectionHandle
            if let peer = peers[Link(index: packet.index, handle: disconnection.connectionHandle)] { packet.addresses = [peer] }
            packet.fields = fields(disconnection)
            let link = Link(index: packet.index, handle: disconnection.connectionHandle)
            // A tracked connection's state stays for the host's late packets; state made by
            // stray ACL on a handle never connected goes now. (A failed disconnection
            // leaves the link up.)
            if disconnection.status == .success {
                if linkOrder.contains(link) { ended[link] = packet.number } else { forget(link) }
            }
        case let .encryptionChange(change):
            packet.connection = change.connectionHandle
            packet.fields = fields(change)
        case let .le(meta):
            decodeLEMeta(meta, into: &packet)
        case let .unknown(_, parameters):
            packet.hex = parameters
        default:
            packet.fields = fields(event)
        }
    }

    /// A Command Complete's return parameters, decoded with the command's own type.
    private func returnParameters(of complete: HCIEvent.CommandComplete) -> [(String, String)] {
        guard let type = HCICommands.type(for: complete.opcode), complete.returnParameters.count > 1 else { return [] }
        return Self.returned(type, Array(complete.returnParameters.dropFirst()), showKeys: showKeys)
    }

    private static func returned<Command: HCICommand>(_ type: Command.Type, _ bytes: [UInt8], showKeys: Bool) -> [(String, String)] {
        var reader = ByteReader(bytes)
        guard let value = try? Command.ReturnParameters(decoding: &reader) else { return [("returnParameters", Hex.string(bytes))] }
        return FieldList.of(value, showKeys: showKeys)
    }

    private mutating func decodeLEMeta(_ meta: LEMetaEvent, into packet: inout TracePacket) {
        switch meta {
        case let .advertisingReport(report):
            reports(report.reports.map { ($0.address, withFields ? "\($0.eventType) \($0.address) (\($0.addressType)) RSSI \($0.rssi)" : "", $0.data) }, into: &packet)
        case let .extendedAdvertisingReport(report):
            reports(report.reports.map { ($0.address, withFields ? "\($0.eventType) \($0.address) (\($0.addressType)) RSSI \($0.rssi)" : "", $0.data) }, into: &packet)
        case let .connectionComplete(complete):
            connected(Link(index: packet.index, handle: complete.connectionHandle), peer: complete.peerAddress, into: &packet)
            packet.fields = fields(complete)
        case let .enhancedConnectionComplete(complete):
            connected(Link(index: packet.index, handle: complete.connectionHandle), peer: complete.peerAddress, into: &packet)
            packet.fields = fields(complete)
        case let .unknown(_, parameters):
            packet.hex = parameters
        default:
            packet.fields = fields(meta)
            if let handle = FieldList.value("connectionHandle", in: meta) as? UInt16 { packet.connection = handle }
        }
    }

    /// Legacy and extended reports alike: each advertiser's address, and with fields its
    /// report line and AD structures.
    private func reports(_ entries: [(address: BluetoothAddress, line: String, data: [UInt8])], into packet: inout TracePacket) {
        packet.layers.insert(.adv)
        for (number, entry) in entries.enumerated() {
            packet.addresses.append(entry.address)
            guard withFields else { continue }
            packet.fields.append(("report \(number + 1)", entry.line))
            packet.fields += AdvertisingFields.of(entry.data)
        }
        packet.summary = entries.map { "\($0.address)" }.joined(separator: ", ")
    }

    private mutating func connected(_ link: Link, peer: BluetoothAddress, into packet: inout TracePacket) {
        packet.connection = link.handle
        packet.addresses = [peer]
        packet.summary = "\(peer) on handle \(link.handle)"
        forget(link)
        if linkOrder.count >= Self.maximumConnections, let oldest = linkOrder.first(where: { ended[$0] != nil }) ?? linkOrder.first {
            if ended[oldest] == nil { forgottenConnections += 1 }
            forget(oldest)
        }
        peers[link] = peer
        linkOrder.append(link)
    }

    /// Reassemblers and outstanding requests exist per connection and direction, made by
    /// whatever ACL a capture holds, with or without a Connection Complete: past twice
    /// ``maximumConnections`` sides, those of connections not tracked are dropped, then all
    /// (counted in ``forgottenSides``).
    private mutating func makeRoom() {
        let limit = 2 * Self.maximumConnections
        guard reassemblers.count >= limit || pending.count >= limit else { return }
        let tracked = Set(linkOrder)
        let before = reassemblers.count + pending.count
        reassemblers = reassemblers.filter { tracked.contains($0.key.link) }
        pending = pending.filter { tracked.contains($0.key.side.link) }
        names = names.filter { tracked.contains($0.key) }
        if reassemblers.count >= limit || pending.count >= limit {
            reassemblers = [:]
            pending = [:]
        }
        forgottenSides += before - reassemblers.count - pending.count
    }

    private mutating func forget(_ link: Link) {
        for received in [false, true] {
            reassemblers[Side(link: link, received: received)] = nil
            identityKeys[Side(link: link, received: received)] = nil
            for indications in [false, true] { pending[Flow(side: Side(link: link, received: received), indications: indications)] = nil }
        }
        names[link] = nil
        peers[link] = nil
        ended[link] = nil
        linkOrder.removeAll { $0 == link }
    }

    // MARK: ACL and L2CAP

    private mutating func decodeACL(_ bytes: [UInt8], index: UInt16, into packet: inout TracePacket) {
        packet.name = "ACL Data"
        let acl: ACLDataPacket
        do {
            acl = try ACLDataPacket(decoding: bytes)
        } catch {
            packet.problem = "\(error)"
            packet.hex = bytes
            return
        }
        let link = Link(index: index, handle: acl.connectionHandle)
        packet.connection = acl.connectionHandle
        if let peer = peers[link] { packet.addresses = [peer] }
        let side = Side(link: link, received: packet.direction == .received)
        if reassemblers[side] == nil { makeRoom() }
        // Mutated in place: a copy out of the table would copy a PDU being collected.
        let (frame, dropped) = reassemblers[side, default: ACLReassembler(maximumPayload: [:], otherChannels: BasicFrame.maximumPayloadLength)].receive(acl)
        if let drop = dropped.first { packet.problem = "\(drop)" }
        guard let frame else {
            packet.summary = reassemblers[side]?.isReassembling == true ? "fragment (\(acl.data.count) bytes)" : ""
            packet.hex = acl.data
            return
        }
        packet.layers.insert(.l2cap)
        packet.channel = frame.channelID.rawValue
        switch frame.channelID {
        case .attributeProtocol:
            decodeATT(frame.payload, side: side, timestamp: packet.timestamp, into: &packet)
        case .securityManagerProtocol:
            decodeSMP(frame.payload, side: side, into: &packet)
        case .leSignaling:
            decodeSignaling(frame.payload, into: &packet)
        default:
            packet.name = "L2CAP"
            packet.summary = "channel 0x" + Hex.string(frame.channelID.rawValue)
            packet.hex = frame.payload
        }
        if let end = ended[link] {
            packet.summary += (packet.summary.isEmpty ? "" : "; ") + "after the link's Disconnection Complete (#\(end))"
        }
    }

    private func decodeSignaling(_ bytes: [UInt8], into packet: inout TracePacket) {
        packet.name = "LE Signaling"
        do {
            let command = try SignalingCommand(decoding: bytes)
            packet.name = "\(command.code)"
            if withFields { packet.fields = [("identifier", "\(command.identifier)"), ("data", Hex.string(command.data))] }
        } catch {
            packet.problem = "\(error)"
            packet.hex = bytes
        }
    }

    private mutating func decodeSMP(_ bytes: [UInt8], side: Side, into packet: inout TracePacket) {
        packet.layers.insert(.smp)
        packet.smpCode = bytes.first
        packet.name = bytes.first.map { "SMP \(SMPCode(rawValue: $0))" } ?? "SMP"
        do {
            let pdu = try SMPPDU(decoding: bytes)
            packet.name = "SMP \(pdu.code)"
            packet.decoded = .smp(pdu)
            packet.summary = "\(pdu)" == "\(pdu.code)" ? "" : "\(pdu)"
            packet.fields = fields(pdu)
            switch pdu {
            case let .identityInformation(irk):
                // Only distribution sends these, one pair per side and pairing: more sides
                // than connections tracked means a damaged or hostile capture.
                if identityKeys[side] == nil, identityKeys.count >= 2 * Self.maximumConnections {
                    forgottenSides += identityKeys.count
                    identityKeys = [:]
                }
                identityKeys[side] = irk
            case let .identityAddressInformation(address):
                if let irk = identityKeys.removeValue(forKey: side) { packet.exchangedIdentity = ExchangedIdentity(irk: irk, address: address.address) }
            default:
                break
            }
        } catch {
            packet.problem = "\(error)"
            packet.hex = bytes
        }
    }

    // MARK: ATT

    private mutating func decodeATT(_ bytes: [UInt8], side: Side, timestamp: Int64, into packet: inout TracePacket) {
        packet.layers.insert(.att)
        packet.attOpcode = bytes.first
        packet.name = "ATT"
        let pdu: ATTPDU
        do {
            pdu = try ATTPDU(decoding: bytes)
        } catch {
            packet.name = "ATT " + (bytes.first.map { ATTOpcode(rawValue: $0).name } ?? "")
            packet.problem = "\(error)"
            packet.hex = bytes
            packet.attHandle = Self.handle(ofMalformed: bytes)
            return
        }
        packet.name = "ATT " + pdu.opcode.name
        packet.attHandle = Self.handle(of: pdu)
        packet.fields = fields(pdu)
        packet.decoded = .att(pdu, answering: nil)
        let link = side.link
        let kind = pdu.opcode.kind
        if kind == .request || kind == .indication {
            let flow = Flow(side: side, indications: kind == .indication)
            if pending[flow] == nil { makeRoom() }
            pending[flow, default: []].append(Pending(number: packet.number, timestamp: timestamp, request: pdu))
            if pending[flow]!.count > Self.maximumOutstanding {
                pending[flow]!.removeFirst()
                unjoinedRequests += 1
            }
        } else if kind == .response || kind == .confirmation {
            // The answer travels the other way from its request, and is about its handle
            // when it names none itself (a Read or Write Response).
            let asker = Flow(side: Side(link: link, received: !side.received), indications: kind == .confirmation)
            if let request = pending[asker]?.last {
                pending[asker]!.removeLast()
                if pending[asker]!.isEmpty { pending[asker] = nil }
                packet.answers = (request.number, elapsed(from: request.timestamp, to: timestamp))
                packet.decoded = .att(pdu, answering: request.request)
                if packet.attHandle == nil { packet.attHandle = Self.handle(of: request.request) }
                learnNames(from: pdu, answering: request.request, link: link)
            }
        }
        if let handle = packet.attHandle {
            packet.summary = "handle 0x" + Hex.string(handle)
            if let name = names[link]?[handle] { packet.summary += " (\(name))" }
        }
    }

    /// The handle an ATT PDU is about, where it has one.
    static func handle(of pdu: ATTPDU) -> UInt16? {
        switch pdu {
        case let .readRequest(r): r.attributeHandle
        case let .readBlobRequest(r): r.attributeHandle
        case let .writeRequest(r): r.attributeHandle
        case let .writeCommand(r): r.attributeHandle
        case let .signedWriteCommand(r): r.attributeHandle
        case let .prepareWriteRequest(r): r.attributeHandle
        case let .prepareWriteResponse(r): r.attributeHandle
        case let .handleValueNotification(r): r.attributeHandle
        case let .handleValueIndication(r): r.attributeHandle
        case let .errorResponse(r): r.attributeHandleInError
        // Lists: the first handle they carry.
        case let .readByTypeResponse(r): r.attributeDataList.first?.attributeHandle
        case let .readByGroupTypeResponse(r): r.attributeDataList.first?.attributeHandle
        case let .findInformationResponse(r): r.informationData.first?.handle
        case let .findByTypeValueResponse(r): r.handlesInformationList.first?.foundAttributeHandle
        default: nil
        }
    }

    /// The handle a PDU cut short still shows, where its opcode puts one and its bytes
    /// reach that far.
    static func handle(ofMalformed bytes: [UInt8]) -> UInt16? {
        guard let opcode = bytes.first else { return nil }
        let at: Int
        switch ATTOpcode(rawValue: opcode) {
        case .readRequest, .readBlobRequest, .writeRequest, .writeCommand, .signedWriteCommand, .prepareWriteRequest,
             .prepareWriteResponse, .handleValueNotification, .handleValueIndication, .findByTypeValueResponse: at = 1
        case .errorResponse, .findInformationResponse, .readByTypeResponse, .readByGroupTypeResponse: at = 2
        default: return nil
        }
        guard bytes.count >= at + 2 else { return nil }
        return UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8
    }

    /// Characteristic, service and descriptor names from discovery answers, so later PDUs
    /// about those handles carry them.
    private mutating func learnNames(from response: ATTPDU, answering request: ATTPDU, link: Link) {
        var learned: [(UInt16, String)] = []
        switch (request, response) {
        case let (.readByTypeRequest(asked), .readByTypeResponse(answer)) where asked.attributeType == GATTUUID.characteristicDeclaration:
            for item in answer.attributeDataList {
                guard let declaration = try? CharacteristicDeclaration(bytes: item.attributeValue) else { continue }
                learned.append((declaration.valueHandle, GATTNames.characteristic(for: declaration.uuid) ?? declaration.uuid.description))
            }
        case let (.readByGroupTypeRequest, .readByGroupTypeResponse(answer)):
            for item in answer.attributeDataList {
                guard let uuid = try? BluetoothUUID(littleEndian: item.attributeValue) else { continue }
                learned.append((item.attributeHandle, GATTNames.service(for: uuid) ?? uuid.description))
            }
        case let (.findInformationRequest, .findInformationResponse(answer)):
            for item in answer.informationData where GATTNames.kind(of: item.type) == .descriptor {
                learned.append((item.handle, GATTNames.descriptor(for: item.type) ?? item.type.description))
            }
        default:
            return
        }
        var table = names[link] ?? [:]
        for (handle, name) in learned where table.count < Self.maximumNames || table[handle] != nil { table[handle] = name }
        names[link] = table
    }
}
