import ATT
@testable import BareBLE
import BluetoothCore
import GATT
import HCI
import Testing
import TestSupport

/// The facade's notification stream against a scripted ATT server, no radio: a peer decides
/// how fast values come, so a consumer that falls behind must cost bounded memory.
@Suite struct NotificationStreamBoundTests {
    /// A link that is only its ATT bearer: no HCI connection, never secured.
    struct BearerOnlyLink: PeripheralLink {
        let bearer: any ATTBearer
        var peer: DeviceAddress { DeviceAddress(BluetoothAddress(0xC0FF_EE00_0001), type: .random) }
        var connection: Connection? { nil }
        var isConnected: Bool { true }
        var disconnectReason: HCIErrorCode? { nil }
        var isEncrypted: Bool { false }
        func disconnect() async throws(PeripheralError) {}
        func disconnection() async throws(PeripheralError) -> HCIErrorCode { throw .notSupported("a scripted link does not end") }
        func secure(explicit: Bool) async throws(PeripheralError) -> SecurityOutcome { throw .notSupported("a scripted link is not secured") }
        func close() {}
    }

    @Test func aConsumerThatFallsBehindKeepsTheNewestValuesAndTheDropsAreCounted() async throws {
        // Subscribing writes 01 00 to the CCCD at 0x000F; the server answers Write Response.
        let bearer = ScriptedBearer([step("12 0F 00 01 00", "13")])
        let central = Central(controller: HCIController(transport: ScriptedTransport()))
        let peripheral = Peripheral(central: central, link: BearerOnlyLink(bearer: bearer), procedureTimeout: GATTClient.defaultProcedureTimeout)
        let characteristic = Characteristic(
            GATTDatabase.Characteristic(
                handle: 0x000D, properties: .notify, valueHandle: 0x000E, uuid: GATTUUID.heartRateMeasurement,
                endHandle: 0x000F, descriptors: [.init(handle: 0x000F, uuid: GATTUUID.clientCharacteristicConfiguration)]),
            serviceUUID: GATTUUID.heartRate, descriptors: [])
        let values = try await peripheral.notifications(for: characteristic)
        let count = 10_000
        bearer.inject((0..<count).map { [0x1B, 0x0E, 0x00, UInt8($0 & 0xFF), UInt8($0 >> 8)] })
        await bearer.drain()
        var iterator = values.makeAsyncIterator()
        let first = await iterator.next()
        let kept = Peripheral.notificationBufferLimit
        #expect(first == [UInt8((count - kept) & 0xFF), UInt8((count - kept) >> 8)])
        #expect(characteristic.droppedNotifications == count - kept)
        #expect(characteristic.value == [UInt8((count - 1) & 0xFF), UInt8((count - 1) >> 8)])
    }
}
