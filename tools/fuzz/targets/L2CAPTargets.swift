import BluetoothCore
import HCI
import L2CAP

/// What a peer sends over ACL: fragments to reassemble, and LE signaling commands.
enum L2CAPTargets {
    static let maximumPayload: [ChannelIdentifier: Int] = [.attributeProtocol: 517, .leSignaling: 23, .securityManagerProtocol: 65]

    /// The input is a sequence of ACL packets (length-prefixed pieces, each an HCI ACL
    /// packet with its header) for one reassembler.
    @Sendable static func aclReassembly(_ bytes: [UInt8]) {
        var reassembler = ACLReassembler(maximumPayload: maximumPayload)
        for piece in FuzzPieces(bytes) {
            guard let packet = try? ACLDataPacket(decoding: piece) else { continue }
            let (frame, dropped) = reassembler.receive(packet)
            expect(dropped.count <= 2, "\(dropped.count) drops for one fragment")
            if let frame {
                let limit = maximumPayload[frame.channelID] ?? -1
                expect(frame.payload.count <= limit, "\(frame.payload.count)-byte frame on \(frame.channelID)")
                signaling(frame.payload)
            }
        }
    }

    /// One LE signaling C-frame payload: the command, then its data as the type its code
    /// names. What decodes re-encodes to the input.
    @Sendable static func signaling(_ bytes: [UInt8]) {
        guard let command = try? SignalingCommand(decoding: bytes) else { return }
        switch command.code {
        case .commandReject: roundTrip(command, CommandReject.self)
        case .disconnectionRequest: roundTrip(command, DisconnectionRequest.self)
        case .connectionParameterUpdateRequest: roundTrip(command, ConnectionParameterUpdateRequest.self)
        case .connectionParameterUpdateResponse: roundTrip(command, ConnectionParameterUpdateResponse.self)
        default: break
        }
    }

    private static func roundTrip<Data: SignalingCommandData>(_ command: SignalingCommand, _ type: Data.Type) {
        guard let value = try? command.decode(type) else { return }
        expect(value.encode() == command.data, "\(type) re-encodes differently")
        expect((try? Data(decoding: value.encode())) == value, "\(type) round trip changed the value")
    }
}
