import ATT
import BluetoothCore
import GATT
import Testing
import TestSupport

/// Multiple Handle Value Notifications (Vol 3 Part F 3.4.7.4) go only to a client that set
/// their bit in its Client Supported Features (Part G 7.2): the ATT server asks the GATT
/// store, which keeps each client's features.
@Suite struct ServerMultipleNotificationTests {
    @Test func theClientsFeatureBitEnablesThem() async throws {
        let store = try ServerProtectedValueTests.makeStore()
        let bearer = ScriptedBearer([], mtu: 23, unscripted: Set((0...255).map { ATTOpcode(rawValue: UInt8($0)) }))
        let server = ATTServer(bearer: bearer, store: store, bearerID: 1)
        // The client side starts the bearer and hands the requests to the server.
        let client = ATTClient(bearer: bearer, server: server)
        defer { withExtendedLifetime(client) {} }
        let values: [MultipleHandleValueNotification.HandleLengthValue] = [
            .init(attributeHandle: 0x0010, attributeValue: [0xAA]), .init(attributeHandle: 0x0013, attributeValue: [0xBB, 0xCC]),
        ]
        #expect(throws: ATTServerError.multipleNotificationsNotEnabled) { try server.notifyMultiple(values) }
        // Write Request of Client Supported Features (0x000B): Multiple Handle Value Notifications.
        bearer.inject("12 0B 00 04")
        try await withDeadline("the Write Response") { await bearer.waitForSent(1) }
        #expect(bearer.sentHex == ["13"])
        #expect(try server.notifyMultiple(values) == 2)
        #expect(bearer.sentHex.last == "23 10 00 01 00 AA 13 00 02 00 BB CC")
        // Another bearer's client did not ask for them.
        let other = ATTServer(bearer: ScriptedBearer([], mtu: 23), store: store, bearerID: 2)
        #expect(throws: ATTServerError.multipleNotificationsNotEnabled) { try other.notifyMultiple(values) }
    }
}
