import BluetoothCore
import HCI
@testable import SMP
import TestSupport

/// Two pairing machines wired back to back: PDUs go across, LE Enable Encryption on the
/// initiator becomes an LTK request on the responder and an encryption change on both
/// when the keys match, and a scripted user answers the delegate's questions.
struct PairingPair {
    var initiator: PairingMachine
    var responder: PairingMachine
    /// What the user does: the passkey typed on a device that asks (nil: use the one shown).
    var typedPasskey: [PairingMachine.Role: UInt32] = [:]
    var confirmNumbers = true
    /// Every PDU on the air, in order, tagged with its sender.
    var air: [(PairingMachine.Role, SMPPDU)] = []
    var displayed: [PairingMachine.Role: UInt32] = [:]
    var compared: [PairingMachine.Role: UInt32] = [:]
    var results: [PairingMachine.Role: PairingAction] = [:]
    var encrypted = false
    /// Drops PDUs from this side after the first `n` (a peer that stops answering).
    var silenceAfter: (PairingMachine.Role, Int)?

    static let centralAddress = DeviceAddress(BluetoothAddress(0xF00D_0000_0001), type: .public)
    static let peripheralAddress = DeviceAddress(BluetoothAddress(0xC44B_4D00_0001), type: .random)

    init(initiator: PairingConfiguration, responder: PairingConfiguration, seed: UInt64 = 1) {
        self.initiator = PairingMachine(
            role: .initiator, configuration: initiator, localAddress: Self.centralAddress,
            peerAddress: Self.peripheralAddress, random: SeededRandom(seed: seed))
        self.responder = PairingMachine(
            role: .responder, configuration: responder, localAddress: Self.peripheralAddress,
            peerAddress: Self.centralAddress, random: SeededRandom(seed: seed &+ 1000))
    }

    mutating func run() {
        var queue: [(PairingMachine.Role, PairingInput)] = [(.initiator, .pair)]
        var steps = 0
        var asked: [PairingMachine.Role] = []
        while steps < 10_000 {
            steps += 1
            if queue.isEmpty {
                // The user types only when nothing else is happening: by then the other
                // device has shown its passkey, if it shows one.
                guard !asked.isEmpty else { break }
                let role = asked.removeFirst()
                let other: PairingMachine.Role = role == .initiator ? .responder : .initiator
                queue.append((role, .passkeyEntered(typedPasskey[role] ?? displayed[other] ?? 123_456)))
            }
            let (role, input) = queue.removeFirst()
            let actions = role == .initiator ? initiator.handle(input) : responder.handle(input)
            let other: PairingMachine.Role = role == .initiator ? .responder : .initiator
            for action in actions {
                switch action {
                case let .send(pdu):
                    air.append((role, pdu))
                    if let (silent, n) = silenceAfter, silent == role, air.filter({ $0.0 == role }).count > n { continue }
                    queue.append((other, .received(pdu.encode())))
                case let .displayPasskey(passkey):
                    displayed[role] = passkey
                    // The user reads it and types it on the other device if that one asks.
                case .requestPasskey:
                    asked.append(role)
                case let .confirmNumericComparison(value):
                    compared[role] = value
                    queue.append((role, .numericComparisonConfirmed(confirmNumbers)))
                case let .startEncryption(key):
                    let reply = responder.handle(.longTermKeyRequested(encryptedDiversifier: key.ediv, randomNumber: key.rand))
                    var replied: LongTermKey?
                    var extra: [PairingAction] = []
                    for action in reply {
                        if case let .replyLongTermKey(answer) = action { replied = answer } else { extra.append(action) }
                    }
                    for case let .send(pdu) in extra {
                        air.append((.responder, pdu))
                        queue.append((.initiator, .received(pdu.encode())))
                    }
                    for action in extra where !action.isSend { record(.responder, action) }
                    if let replied, replied == key {
                        encrypted = true
                        // Encryption Change v1, then the key size read separately.
                        queue.append((.responder, .encryptionChanged(keySize: nil)))
                        queue.append((.initiator, .encryptionChanged(keySize: nil)))
                        queue.append((.responder, .encryptionKeySizeRead(16)))
                        queue.append((.initiator, .encryptionKeySizeRead(16)))
                    } else {
                        queue.append((.initiator, .encryptionFailed(replied == nil ? .pinOrKeyMissing : .connectionTerminatedDueToMICFailure)))
                    }
                default:
                    record(role, action)
                }
            }
        }
    }

    mutating func record(_ role: PairingMachine.Role, _ action: PairingAction) {
        switch action {
        case .completed, .failed: results[role] = action
        default: break
        }
    }

    func keys(_ role: PairingMachine.Role) -> PairingKeys? {
        if case let .completed(keys)? = results[role] { return keys }
        return nil
    }

    func error(_ role: PairingMachine.Role) -> PairingError? {
        if case let .failed(error)? = results[role] { return error }
        return nil
    }

    var codes: [SMPCode] { air.map(\.1.code) }
}
