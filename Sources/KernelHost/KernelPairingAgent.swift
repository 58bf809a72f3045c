import BluetoothCore
import CBluetooth
import Glibc
import HCITransport
import Synchronization

/// Who answers the kernel's pairing questions that need a person (MITM-protected pairing,
/// BT_SECURITY `high` or `fips`): compare a number, type the passkey the peer shows, show
/// ours. Called on a task of its own; the kernel waits up to SMP's 30 s.
public protocol KernelPairingResponder: Sendable {
    /// Numeric comparison: whether the peer shows the same six-digit `value`.
    func confirmNumericComparison(_ value: UInt32, peer: DeviceAddress) async -> Bool
    /// Passkey entry: the passkey the peer shows, or nil to refuse.
    func enterPasskey(peer: DeviceAddress) async -> UInt32?
    /// Passkey entry the other way: show `passkey` for the user to type on the peer.
    func displayPasskey(_ passkey: UInt32, peer: DeviceAddress) async
}

/// The part of a pairing agent the kernel's SMP needs when no daemon runs: since Linux 5.x
/// the kernel asks user space to confirm even a Just Works pairing (a management User
/// Confirmation Request with the "confirm hint" set) and waits, until SMP's 30 s timeout,
/// for the answer bluetoothd's agent would give. This agent listens on the management
/// channel while it exists and confirms Just Works requests for one adapter; numeric
/// comparisons and passkeys go to its ``KernelPairingResponder``, and are declined when
/// it has none.
public final class KernelPairingAgent: Sendable {
    public let index: Int
    private let loop: DescriptorLoop
    private let responder: (any KernelPairingResponder)?
    private let confirmedCount = Atomic(0)
    private let declinedCount = Atomic(0)

    enum Event {
        static let userConfirmationRequest: UInt16 = 0x000F
        static let userPasskeyRequest: UInt16 = 0x0010
        static let passkeyNotify: UInt16 = 0x0017
    }

    enum Opcode {
        static let userConfirmationReply: UInt16 = 0x001C
        static let userConfirmationNegativeReply: UInt16 = 0x001D
        static let userPasskeyReply: UInt16 = 0x001E
        static let userPasskeyNegativeReply: UInt16 = 0x001F
    }

    /// Starts answering hci`index`'s pairing requests until ``close()``; `responder`
    /// answers those a person must (none: they are declined).
    public static func start(index: Int, responder: (any KernelPairingResponder)? = nil) throws(TransportError) -> KernelPairingAgent {
        let spec = TransportSpec.hciRaw(index: index)
        let fd = try HCISocket.open(spec: spec)
        try HCISocket.bind(fd, index: Int(bareble_HCI_DEV_NONE()), channel: bareble_HCI_CHANNEL_CONTROL(), spec: spec)
        let agent = KernelPairingAgent(index: index, loop: try DescriptorLoop(fd: fd, spec: spec, name: "mgmt agent hci\(index)"), responder: responder)
        try agent.loop.start(chunk: { [weak agent] bytes, _ in
            if let bytes { agent?.handle(Array(bytes)) }
            return nil
        }, closed: { _ in })
        return agent
    }

    private init(index: Int, loop: DescriptorLoop, responder: (any KernelPairingResponder)?) {
        self.index = index
        self.loop = loop
        self.responder = responder
    }

    /// Requests confirmed or answered (Just Works, and the responder's yes or passkey),
    /// and requests declined, so far.
    public var confirmed: Int { confirmedCount.load(ordering: .relaxed) }
    public var declined: Int { declinedCount.load(ordering: .relaxed) }

    public func close() { loop.close() }

    private func handle(_ bytes: [UInt8]) {
        var reader = ByteReader(bytes)
        guard let event = try? reader.readUInt16(), let eventIndex = try? reader.readUInt16(),
              let length = try? reader.readUInt16(), Int(length) == reader.remaining,
              eventIndex == UInt16(truncatingIfNeeded: index),
              let address = try? reader.readBytes(7)  // address (6) and its type (1)
        else { return }
        let peer = Self.peer(address)
        switch event {
        case Event.userConfirmationRequest:
            // Confirm_Hint 1: Just Works, nothing for a person to compare; 0: the value is
            // a numeric comparison.
            guard let hint = try? reader.readUInt8(), let value = try? reader.readUInt32() else { return }
            if hint == 1 {
                answer(Opcode.userConfirmationReply, address)
            } else if let responder {
                Task {
                    let same = await responder.confirmNumericComparison(value, peer: peer)
                    self.answer(same ? Opcode.userConfirmationReply : Opcode.userConfirmationNegativeReply, address)
                }
            } else {
                answer(Opcode.userConfirmationNegativeReply, address)
            }
        case Event.userPasskeyRequest:
            guard let responder else { return answer(Opcode.userPasskeyNegativeReply, address) }
            Task {
                if let passkey = await responder.enterPasskey(peer: peer) {
                    var writer = ByteWriter()
                    writer.write(passkey)
                    self.answer(Opcode.userPasskeyReply, address, writer.bytes)
                } else {
                    self.answer(Opcode.userPasskeyNegativeReply, address)
                }
            }
        case Event.passkeyNotify:
            // Passkey (4), then how many digits the peer's user entered so far (1): the
            // first notification is the one to show.
            guard let passkey = try? reader.readUInt32(), let entered = try? reader.readUInt8(), entered == 0, let responder else { return }
            Task { await responder.displayPasskey(passkey, peer: peer) }
        default:
            break
        }
    }

    /// The address and mgmt address type of an event (1 LE public, 2 LE random).
    static func peer(_ bytes: [UInt8]) -> DeviceAddress {
        let address = (try? BluetoothAddress(littleEndian: Array(bytes.prefix(6)))) ?? BluetoothAddress(0)
        return DeviceAddress(address, type: bytes.last == 2 ? .random : .public)
    }

    private func answer(_ opcode: UInt16, _ address: [UInt8], _ more: [UInt8] = []) {
        let positive = opcode == Opcode.userConfirmationReply || opcode == Opcode.userPasskeyReply
        if positive {
            confirmedCount.add(1, ordering: .relaxed)
        } else {
            declinedCount.add(1, ordering: .relaxed)
        }
        let packet = KernelManagement.commandPacket(opcode, index: index, parameters: address + more)
        // Fails only when the channel is closing, when nobody waits for the answer anyway.
        packet.withUnsafeBytes { raw in
            do throws(TransportError) { try loop.write(raw, timeout: .seconds(1)) } catch {}
        }
    }
}
