import BluetoothCore
import HCI
import SMP
import TestSupport

/// Security Manager PDUs, and the pairing machine driven by a hostile peer.
enum SMPTargets {
    @Sendable static func pdu(_ bytes: [UInt8]) {
        guard let pdu = try? SMPPDU(decoding: bytes) else { return }
        expect((try? SMPPDU(decoding: pdu.encode())) == pdu, "round trip changed \(pdu)")
    }

    /// The input is a script: each step a selector byte, then what the step needs (a
    /// length-prefixed PDU from the peer, a passkey, an encryption event, the timer).
    /// Randomness is seeded, so a finding replays.
    static func pairing(_ role: PairingMachine.Role, _ bytes: [UInt8]) {
        let central = DeviceAddress(BluetoothAddress(0x0102_0304_0506), type: .public)
        let peripheral = DeviceAddress(BluetoothAddress(0xC605_0403_0201), type: .random)
        let (local, peer) = role == .initiator ? (central, peripheral) : (peripheral, central)
        var machine = PairingMachine(
            role: role, configuration: PairingConfiguration(allowDebugKeys: true), localAddress: local,
            peerAddress: peer, random: SeededRandom(seed: 1))
        var script = bytes[...]
        var steps = 0
        while let selector = script.popFirst(), steps < 64 {
            steps += 1
            let argument = script.popFirst() ?? 0
            let input: PairingInput
            switch selector % 9 {
            case 0: input = .pair
            case 1:
                let pdu = Array(script.prefix(Int(argument % 80)))
                script = script.dropFirst(pdu.count)
                input = .received(pdu)
            case 2: input = .passkeyEntered(argument == 0 ? nil : UInt32(argument) * 3_911)
            case 3: input = .numericComparisonConfirmed(argument & 1 == 1)
            case 4: input = .longTermKeyRequested(encryptedDiversifier: UInt16(argument), randomNumber: UInt64(argument))
            case 5: input = .encryptionChanged(keySize: argument == 0 ? nil : Int(argument % 20))
            case 6: input = .encryptionFailed(HCIErrorCode(rawValue: argument))
            case 7: input = .encryptionKeySizeRead(argument == 0 ? nil : Int(argument % 20))
            default: input = .timerExpired
            }
            let actions = machine.handle(input)
            expect(actions.count <= 8, "\(actions.count) actions for one input")
            for action in actions {
                if case .send(let pdu) = action { expect((try? SMPPDU(decoding: pdu.encode())) == pdu, "sent \(pdu) does not round-trip") }
            }
        }
    }
}
