import HCI
@testable import L2CAP
import Testing
import TestSupport

/// Sending without a task: a PDU that fits one ACL packet goes to the driver on the
/// caller's thread when nothing is queued and a credit is free.
@Suite struct ImmediateSendTests {
    /// In the controller when `submit` returns; without a credit it waits for one as before.
    @Test func aOnePacketPDUIsInTheControllerWhenSubmitReturns() async throws {
        let harness = try await L2CAPHarness.make(aclLength: 27, aclCount: 1)
        await harness.connect(0x40)
        let acl = { harness.log.all.filter { $0.type == .acl }.count }
        let before = acl()
        try harness.manager.submit([0x1B, 0x03, 0x00, 0x01], cid: .attributeProtocol, connection: 0x40)
        #expect(acl() == before + 1)
        try harness.manager.submit([0x1B, 0x03, 0x00, 0x02], cid: .attributeProtocol, connection: 0x40)
        #expect(acl() == before + 1, "sent without a credit")
        #expect(try await harness.log.nextACL().data.last == 0x01)
        await harness.complete(0x40)
        #expect(try await harness.log.nextACL().data.last == 0x02)
        #expect(harness.chip.maximumInFlight == 1)
    }
}
