import BluetoothCore
import CBluetooth
import Glibc
import Synchronization

/// The part of a pairing agent the kernel's SMP needs when no daemon runs: since Linux 5.x
/// the kernel asks user space to confirm even a Just Works pairing (a management User
/// Confirmation Request with the "confirm hint" set) and waits, until SMP's 30 s timeout,
/// for the answer bluetoothd's agent would give. This agent listens on the management
/// channel while it exists and confirms Just Works requests for one adapter; it declines
/// numeric comparisons and passkeys, which need a person (a later issue).
public final class KernelPairingAgent: Sendable {
    public let index: Int
    private let loop: DescriptorLoop
    private let confirmedCount = Atomic(0)
    private let declinedCount = Atomic(0)

    enum Event {
        static let userConfirmationRequest: UInt16 = 0x000F
        static let userPasskeyRequest: UInt16 = 0x0010
    }

    enum Opcode {
        static let userConfirmationReply: UInt16 = 0x001C
        static let userConfirmationNegativeReply: UInt16 = 0x001D
        static let userPasskeyNegativeReply: UInt16 = 0x001F
    }

    /// Starts answering hci`index`'s pairing requests until ``close()``.
    public static func start(index: Int) throws(TransportError) -> KernelPairingAgent {
        let spec = TransportSpec.hciRaw(index: index)
        let fd = try HCISocket.open(spec: spec)
        try HCISocket.bind(fd, index: Int(bareble_HCI_DEV_NONE()), channel: bareble_HCI_CHANNEL_CONTROL(), spec: spec)
        let agent = KernelPairingAgent(index: index, loop: try DescriptorLoop(fd: fd, spec: spec, name: "mgmt agent hci\(index)", isSocket: true))
        try agent.loop.start(chunk: { [weak agent] bytes, _ in
            if let bytes { agent?.handle(Array(bytes)) }
            return nil
        }, closed: { _ in })
        return agent
    }

    private init(index: Int, loop: DescriptorLoop) {
        self.index = index
        self.loop = loop
    }

    /// Just Works requests confirmed, and other requests declined, so far.
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
        switch event {
        case Event.userConfirmationRequest:
            // Confirm_Hint 1: Just Works, nothing for a person to compare.
            let justWorks = (try? reader.readUInt8()) == 1
            reply(justWorks ? Opcode.userConfirmationReply : Opcode.userConfirmationNegativeReply, address)
            if justWorks {
                confirmedCount.add(1, ordering: .relaxed)
            } else {
                declinedCount.add(1, ordering: .relaxed)
            }
        case Event.userPasskeyRequest:
            reply(Opcode.userPasskeyNegativeReply, address)
            declinedCount.add(1, ordering: .relaxed)
        default:
            break
        }
    }

    private func reply(_ opcode: UInt16, _ address: [UInt8]) {
        let packet = KernelManagement.commandPacket(opcode, index: index, parameters: address)
        // Fails only when the channel is closing, when nobody waits for the answer anyway.
        packet.withUnsafeBytes { raw in
            do throws(TransportError) { try loop.write(raw, timeout: .seconds(1)) } catch {}
        }
    }
}
