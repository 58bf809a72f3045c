import HCI
@testable import L2CAP
import Testing
import TestSupport

/// LE signaling through the shared harness: what the peer sends, what the host answers.
extension L2CAPHarness {
    /// A signaling command from the peer.
    func receiveSignaling(_ command: SignalingCommand, handle: UInt16) async {
        await receive(command.encode(), cid: .leSignaling, handle: handle)
    }

    /// The next ACL packet, which must be a whole signaling C-frame; credit returned.
    func nextSignaling(handle: UInt16) async throws -> SignalingCommand {
        let packet = try await log.nextACL()
        #expect(packet.connectionHandle == handle)
        #expect(packet.packetBoundary == .firstNonFlushable)
        await complete(packet.connectionHandle)
        let frame = try BasicFrame(decoding: packet.data)
        #expect(frame.channelID == .leSignaling)
        return try SignalingCommand(decoding: frame.payload)
    }
}
