import ATT
import BluetoothCore
import GATT
import HCI

/// A peer's GATT database rebuilt from what a trace shows our client learning of it: the
/// discovery answers (Read By Group Type for services, Read By Type for includes,
/// characteristics and the Database Hash, Find Information for descriptors), the values
/// read (Read and Read Blob, joined into the whole value) and the reads refused (Error
/// Response), and the ATT_MTU agreed. The peer is the side that answers: only answers
/// received to requests we sent are taken. Fed packets in order; no I/O, no clock.
///
/// One connection is rebuilt: the first, among those ``Choice`` admits, on which a primary
/// service discovery was answered; later connections are ignored, even to the same peer.
/// Until one is chosen, the connections admitted are followed side by side, at most
/// ``maximumConnections`` (more: the oldest is forgotten, counted in
/// ``forgottenConnections``); each keeps at most ``maximumAttributes`` handles with what
/// was learnt of them (more are counted in ``forgottenAttributes``), and a value at most
/// the 512 bytes ATT allows.
public struct TraceGATTDatabase: Sendable {
    public static let maximumConnections = 16
    public static let maximumAttributes = 4096

    /// Which connection is rebuilt.
    public enum Choice: Sendable, Hashable {
        /// The first connection with a discovery.
        case first
        /// The first connection to this peer with a discovery.
        case address(BluetoothAddress)
        /// The first connection on this handle with a discovery.
        case connection(UInt16)
    }

    /// A read the peer refused: what to say about it, as the client would have.
    public struct ReadFailure: Sendable, Hashable {
        public var request: ATTOpcode
        public var code: ATTErrorCode

        public init(request: ATTOpcode, code: ATTErrorCode) {
            self.request = request
            self.code = code
        }
    }

    /// What was rebuilt.
    public struct Result: Sendable {
        public var index: UInt16
        public var connection: UInt16
        /// From the Connection Complete; nil when the capture began after it.
        public var peer: DeviceAddress?
        public var mtu: UInt16
        /// Services with their characteristics and descriptors; `value` is the last value
        /// read, nil when none was.
        public var database: GATTDatabase
        /// Characteristic values and descriptors whose last read was refused, by handle.
        public var failures: [UInt16: ReadFailure]
    }

    struct Link: Hashable { var index: UInt16, handle: UInt16 }

    /// What one connection showed.
    struct Learnt {
        var peer: DeviceAddress?
        var mtu = ATTConstants.minimumLEMTU
        var primaries: [UInt16: GATTDatabase.Service] = [:]
        /// Include declarations; a 128-bit service's UUID comes from the read of its declaration.
        var includes: [UInt16: (services: ClosedRange<UInt16>, uuid: BluetoothUUID?)] = [:]
        var characteristics: [UInt16: GATTDatabase.Characteristic] = [:]
        var descriptors: [UInt16: BluetoothUUID] = [:]
        var values: [UInt16: [UInt8]] = [:]
        var failures: [UInt16: ReadFailure] = [:]
        var databaseHash: [UInt8]?
        var count: Int { primaries.count + includes.count + characteristics.count + descriptors.count + values.count + failures.count }
    }

    public let choice: Choice
    private var following: [Link: Learnt] = [:]
    private var order: [Link] = []
    private var chosen: Link?
    /// The chosen connection ended: nothing more is taken.
    private var ended = false
    public private(set) var forgottenConnections = 0
    public private(set) var forgottenAttributes = 0

    public init(choosing choice: Choice = .first) {
        self.choice = choice
    }

    public mutating func add(_ packet: TracePacket) {
        guard !ended, let decoded = packet.decoded else { return }
        switch decoded {
        case let .event(.le(.connectionComplete(complete))) where complete.status == .success:
            connected(Link(index: packet.index, handle: complete.connectionHandle), peer: complete.peerAddress, type: complete.peerAddressType)
        case let .event(.le(.enhancedConnectionComplete(complete))) where complete.status == .success:
            connected(Link(index: packet.index, handle: complete.connectionHandle), peer: complete.peerAddress, type: complete.peerAddressType)
        case let .event(.disconnectionComplete(disconnection)):
            let link = Link(index: packet.index, handle: disconnection.connectionHandle)
            if link == chosen { ended = true } else { drop(link) }
        case let .att(pdu, answering: request?):
            guard let handle = packet.connection else { return }
            learn(pdu, answering: request, received: packet.direction == .received, on: Link(index: packet.index, handle: handle))
        default:
            return
        }
    }

    /// The chosen connection's database; nil when no connection admitted had a discovery.
    public func result() throws(GATTError) -> Result? {
        guard let chosen, let learnt = following[chosen] else { return nil }
        var includes: [GATTDatabase.IncludedService] = []
        for (handle, include) in learnt.includes {
            let uuid = include.uuid ?? learnt.values[include.services.lowerBound].flatMap { $0.count == 16 ? try? BluetoothUUID(littleEndian: $0) : nil }
            guard let uuid else { continue }
            includes.append(.init(handle: handle, serviceHandles: include.services, uuid: uuid))
        }
        var services = try GATTDatabase.rebuilt(
            primaries: Array(learnt.primaries.values), includes: includes, characteristics: Array(learnt.characteristics.values),
            descriptors: learnt.descriptors.map { GATTDatabase.Descriptor(handle: $0.key, uuid: $0.value) })
        for index in services.indices {
            for position in services[index].characteristics.indices {
                services[index].characteristics[position].value = learnt.values[services[index].characteristics[position].valueHandle]
                for at in services[index].characteristics[position].descriptors.indices {
                    services[index].characteristics[position].descriptors[at].value = learnt.values[services[index].characteristics[position].descriptors[at].handle]
                }
            }
        }
        return Result(
            index: chosen.index, connection: chosen.handle, peer: learnt.peer, mtu: learnt.mtu,
            database: GATTDatabase(services: services, databaseHash: learnt.databaseHash), failures: learnt.failures)
    }

    // MARK: Following connections

    private mutating func connected(_ link: Link, peer: BluetoothAddress, type: ReportedAddressType) {
        guard chosen == nil else { return }
        drop(link)
        switch choice {
        case .first: break
        case .address(let wanted): guard peer == wanted else { return }
        case .connection(let wanted): guard link.handle == wanted else { return }
        }
        // Resolved identities (0x02, 0x03) are shown as the identity's own type.
        let kind: AddressType = type.rawValue & 1 == 0 ? .public : .random
        following[link] = Learnt(peer: DeviceAddress(peer, type: kind))
        order.append(link)
        if order.count > Self.maximumConnections {
            drop(order[0])
            forgottenConnections += 1
        }
    }

    private mutating func drop(_ link: Link) {
        following[link] = nil
        order.removeAll { $0 == link }
    }

    /// The state of `link` when it is followed: a connection seen only from its ATT (the
    /// capture began later) is followed when the choice admits it.
    private mutating func followed(_ link: Link) -> Bool {
        if let chosen { return chosen == link }
        if following[link] != nil { return true }
        switch choice {
        case .first: break
        case .address: return false
        case .connection(let wanted): guard link.handle == wanted else { return false }
        }
        following[link] = Learnt()
        order.append(link)
        if order.count > Self.maximumConnections {
            drop(order[0])
            forgottenConnections += 1
        }
        return following[link] != nil
    }

    // MARK: Learning

    private mutating func learn(_ answer: ATTPDU, answering request: ATTPDU, received: Bool, on link: Link) {
        // The MTU is the bearer's, whichever side asked.
        if case let (.exchangeMTURequest(asked), .exchangeMTUResponse(answered)) = (request, answer) {
            guard followed(link) else { return }
            following[link]!.mtu = max(ATTConstants.minimumLEMTU, min(asked.clientRxMTU, answered.serverRxMTU))
            return
        }
        guard received, followed(link) else { return }
        var learnt = following.removeValue(forKey: link)!
        defer { following[link] = learnt }
        let room = Self.maximumAttributes - learnt.count
        var taken = 0
        func admit(_ known: Bool) -> Bool {
            if known { return true }
            guard taken < room else {
                forgottenAttributes += 1
                return false
            }
            taken += 1
            return true
        }
        switch (request, answer) {
        case let (.readByGroupTypeRequest(asked), .readByGroupTypeResponse(response)) where asked.attributeGroupType == GATTUUID.primaryService:
            for entry in response.attributeDataList where entry.attributeHandle <= entry.endGroupHandle {
                guard let uuid = try? BluetoothUUID(littleEndian: entry.attributeValue),
                      admit(learnt.primaries[entry.attributeHandle] != nil) else { continue }
                learnt.primaries[entry.attributeHandle] = .init(uuid: uuid, handles: entry.attributeHandle...entry.endGroupHandle)
            }
            if chosen == nil, !learnt.primaries.isEmpty { choose(link) }
        case let (.readByTypeRequest(asked), .readByTypeResponse(response)) where asked.attributeType == GATTUUID.include:
            for entry in response.attributeDataList {
                let value = entry.attributeValue
                guard value.count == 4 || value.count == 6 else { continue }
                let first = UInt16(value[0]) | UInt16(value[1]) << 8
                let end = UInt16(value[2]) | UInt16(value[3]) << 8
                guard first <= end, admit(learnt.includes[entry.attributeHandle] != nil) else { continue }
                learnt.includes[entry.attributeHandle] = (first...end, value.count == 6 ? try? BluetoothUUID(littleEndian: Array(value[4...])) : nil)
            }
        case let (.readByTypeRequest(asked), .readByTypeResponse(response)) where asked.attributeType == GATTUUID.characteristicDeclaration:
            for entry in response.attributeDataList {
                guard let declaration = try? CharacteristicDeclaration(bytes: entry.attributeValue),
                      admit(learnt.characteristics[entry.attributeHandle] != nil) else { continue }
                learnt.characteristics[entry.attributeHandle] = .init(
                    handle: entry.attributeHandle, properties: declaration.properties, valueHandle: declaration.valueHandle,
                    uuid: declaration.uuid, endHandle: declaration.valueHandle)
            }
        case let (.readByTypeRequest(asked), .readByTypeResponse(response)) where asked.attributeType == GATTUUID.databaseHash:
            if let hash = response.attributeDataList.first?.attributeValue, hash.count == 16 { learnt.databaseHash = hash }
        case let (.findInformationRequest, .findInformationResponse(response)):
            for entry in response.informationData where admit(learnt.descriptors[entry.handle] != nil) {
                learnt.descriptors[entry.handle] = entry.type
            }
        case let (.readRequest(asked), .readResponse(response)):
            guard admit(learnt.values[asked.attributeHandle] != nil) else { return }
            learnt.values[asked.attributeHandle] = Array(response.attributeValue.prefix(ATTConstants.maximumAttributeValueLength))
            learnt.failures[asked.attributeHandle] = nil
        case let (.readBlobRequest(asked), .readBlobResponse(response)):
            // A piece continues the value read so far; one that leaves a gap is not a value.
            let offset = Int(asked.valueOffset)
            let have = learnt.values[asked.attributeHandle] ?? []
            guard offset <= have.count, admit(learnt.values[asked.attributeHandle] != nil) else { return }
            learnt.values[asked.attributeHandle] = Array((have.prefix(offset) + response.partAttributeValue).prefix(ATTConstants.maximumAttributeValueLength))
            learnt.failures[asked.attributeHandle] = nil
        case let (.readRequest(asked), .errorResponse(error)):
            guard admit(learnt.failures[asked.attributeHandle] != nil) else { return }
            learnt.values[asked.attributeHandle] = nil
            learnt.failures[asked.attributeHandle] = ReadFailure(request: error.requestOpcodeInError, code: error.errorCode)
        case let (.readBlobRequest(asked), .errorResponse(error)):
            // How a long read ends (GATTClient.continueLongRead): not a failure.
            if asked.valueOffset > 0, error.errorCode == .attributeNotLong || error.errorCode == .invalidOffset { return }
            guard admit(learnt.failures[asked.attributeHandle] != nil) else { return }
            learnt.values[asked.attributeHandle] = nil
            learnt.failures[asked.attributeHandle] = ReadFailure(request: error.requestOpcodeInError, code: error.errorCode)
        default:
            return
        }
    }

    private mutating func choose(_ link: Link) {
        chosen = link
        following = following.filter { $0.key == link }
        order = [link]
    }
}
