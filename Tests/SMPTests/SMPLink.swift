import BluetoothCore
import HCI
import L2CAP
import Logging
@testable import SMP
import TestSupport

/// One LE link on a scripted controller with a ``SecurityManager`` on it: the test plays
/// the peer by injecting SMP PDUs and reading the ones we sent from the controller's log.
struct SMPLink {
    static let handle: UInt16 = 0x40
    let harness: L2CAPHarness
    let connector: Connector
    let connection: Connection

    /// - Parameter returnsCreditsAtOnce: false leaves the controller's one ACL buffer full
    ///   after our first PDU, so the SMP worker stays stuck in its second send.
    static func make(role: ConnectionRole, returnsCreditsAtOnce: Bool = true) async throws -> SMPLink {
        // 251-octet ACL packets: a public key (65 octets) goes out unfragmented.
        let harness = try await L2CAPHarness.make(aclLength: 251, aclCount: 1, returnsCreditsAtOnce: returnsCreditsAtOnce)
        let connector = Connector(controller: harness.controller)
        await harness.connect(handle, role: role)
        guard let connection = connector.connection(handle: handle) else { throw MissingConnection() }
        return SMPLink(harness: harness, connector: connector, connection: connection)
    }

    func manager(
        _ configuration: PairingConfiguration = PairingConfiguration(), delegate: (any PairingDelegate)? = nil,
        smpTimeout: Duration = .seconds(30), pairingDeadline: Duration = SecurityManager.defaultPairingDeadline,
        observer: SecurityManager.PairingObserver? = nil, storedBond: SecurityManager.BondLookup? = nil, logs: LogCapture? = nil,
        logger: Logger? = nil
    ) throws -> SecurityManager {
        try SecurityManager(
            connection: connection, channels: harness.manager, configuration: configuration, delegate: delegate,
            storedBond: storedBond, observer: observer, smpTimeout: smpTimeout, pairingDeadline: pairingDeadline, random: SeededRandom(seed: 5),
            logger: logger ?? LogCapture.logger(SecurityManager.defaultLogLabel, from: logs))
    }

    func peerSends(_ pdu: SMPPDU) async { await peerSends(bytes: pdu.encode()) }

    func peerSends(bytes: [UInt8]) async {
        await harness.receive(bytes, cid: .securityManagerProtocol, handle: Self.handle)
    }

    /// The next SMP PDU we sent (other packets skipped).
    func nextSent(timeout: Duration = .seconds(30)) async throws -> SMPPDU {
        while true {
            let packet = try await harness.log.next("an SMP PDU from us", timeout: timeout)
            guard packet.type == .acl, let acl = try? ACLDataPacket(decoding: packet.bytes),
                  let frame = try? BasicFrame(decoding: acl.data), frame.channelID == .securityManagerProtocol else { continue }
            return try SMPPDU(decoding: frame.payload)
        }
    }

    /// Plays the peer with a ``PairingMachine`` of the other role that answers each of our
    /// PDUs only after `delay`: a peer that is slow but never slow enough for one SMP
    /// timer. Every passkey typed is 123456. Runs until cancelled or the link's log stalls.
    func slowPeer(role: PairingMachine.Role, configuration: PairingConfiguration, delay: Duration, starts: Bool = false) -> Task<Void, Never> {
        let local = DeviceAddress(BluetoothAddress(0xF00D_0000_0001), type: .public)
        let peer = connection.peer
        return Task {
            var machine = PairingMachine(role: role, configuration: configuration, localAddress: peer, peerAddress: local, random: SeededRandom(seed: 9))
            var pending = starts ? machine.handle(.pair) : []
            while !Task.isCancelled {
                var more: [PairingAction] = []
                for action in pending {
                    switch action {
                    case let .send(pdu):
                        try? await Task.sleep(for: delay)
                        await peerSends(pdu)
                    case .requestPasskey:
                        more += machine.handle(.passkeyEntered(123_456))
                    default:
                        break
                    }
                }
                if !more.isEmpty {
                    pending = more
                    continue
                }
                guard let ours = try? await nextSent(timeout: .seconds(10)) else { return }
                pending = machine.handle(.received(ours.encode()))
            }
        }
    }
}

/// A user who types 123456 at once, or never answers when `silent` (until the test ends).
struct TypingUser: PairingDelegate {
    var silent = false

    func displayPasskey(_ passkey: UInt32, peer: DeviceAddress) async {}

    func enterPasskey(peer: DeviceAddress) async -> UInt32? {
        if silent { try? await Task.sleep(for: .seconds(20)) }
        return 123_456
    }

    func confirmNumericComparison(_ value: UInt32, peer: DeviceAddress) async -> Bool { true }
}

/// Outcomes reported to a ``SecurityManager/PairingObserver``.
final class PairingOutcomes: Sendable {
    private let results = Lock<[Result<PairingKeys, PairingError>]>([])
    var all: [Result<PairingKeys, PairingError>] { results.withLock { $0 } }
    var observer: SecurityManager.PairingObserver { { [self] result in results.withLock { $0.append(result) } } }
}

struct MissingConnection: Error {}

/// How a pairing call ended: nil on success, else its error.
func pairingError(_ body: @Sendable () async throws -> PairingKeys) async -> PairingError? {
    do {
        _ = try await body()
        return nil
    } catch {
        return error as? PairingError ?? .transport("not a PairingError: \(error)")
    }
}
