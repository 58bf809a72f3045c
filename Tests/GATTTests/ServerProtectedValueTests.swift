import ATT
import BluetoothCore
import GATT
import Testing

/// A value that needs a protected link to be read must not reach an unprotected link in a
/// notification or an indication either: the CCCD a store adds asks for what reading the
/// value asks for, and ``GATTServerStore/recipients(of:)`` says what a link must have for
/// the value to go to it (the caller checks each subscriber's link against it).
@Suite struct ServerProtectedValueTests {
    static let encrypted = ATTPermissions.Access(protection: .encryption)
    static let authenticated = ATTPermissions.Access(protection: .authentication, minimumKeySize: 16)

    /// After GAP (1-5) and GATT (6-0x0D): an open read/notify value at 0x0010 (CCCD 0x0011),
    /// a read/notify value that needs encryption and a key of 16 octets to be read, with
    /// authorization, at 0x0013 (CCCD 0x0014), and a notify-only value at 0x0016 whose
    /// declared CCCD needs authentication to be written (0x0017).
    static func makeStore() throws -> GATTServerStore {
        try GATTServerStore(services: [
            GATTDatabase.Service(uuid: BluetoothUUID(UInt16(0xFFF0)), characteristics: [
                GATTDatabase.Characteristic(uuid: BluetoothUUID(UInt16(0xFFF1)), properties: [.read, .notify], value: [1]),
                GATTDatabase.Characteristic(
                    uuid: BluetoothUUID(UInt16(0xFFF2)), properties: [.read, .notify, .indicate], value: [2],
                    permissions: ATTPermissions(read: .init(protection: .encryption, minimumKeySize: 16, requiresAuthorization: true))),
                GATTDatabase.Characteristic(uuid: BluetoothUUID(UInt16(0xFFF3)), properties: [.notify], value: [3], descriptors: [
                    GATTDatabase.Descriptor(uuid: GATTUUID.clientCharacteristicConfiguration, permissions: ATTPermissions(read: .open, write: authenticated)),
                ]),
            ]),
        ])
    }

    @Test func theAddedCCCDAsksWhatReadingTheValueAsks() throws {
        let store = try Self.makeStore()
        #expect(store.attribute(at: 0x0011)?.type == GATTUUID.clientCharacteristicConfiguration)
        #expect(store.attribute(at: 0x0011)?.permissions == .readWrite)
        #expect(store.attribute(at: 0x0014)?.type == GATTUUID.clientCharacteristicConfiguration)
        // Authorization is the application's to give per request: not asked of a CCCD write.
        #expect(store.attribute(at: 0x0014)?.permissions == ATTPermissions(read: .open, write: .init(protection: .encryption, minimumKeySize: 16)))
        #expect(store.attribute(at: 0x0017)?.permissions == ATTPermissions(read: .open, write: Self.authenticated))
    }

    @Test func recipientsSayWhatALinkNeedsForTheValue() throws {
        let store = try Self.makeStore()
        #expect(store.recipients(of: 0x0010).access == .open)
        #expect(store.recipients(of: 0x0013).access == .init(protection: .encryption, minimumKeySize: 16))
        #expect(store.recipients(of: 0x0016).access == Self.authenticated)
        #expect(store.recipients(of: 0x0008).access == .open, "Service Changed goes to every subscriber")
    }

    /// A link that may not read the value gets 0x05 for its CCCD write, so a central learns
    /// to pair before it subscribes, as it does for a read.
    @Test func anUnprotectedLinkIsRefusedTheSubscription() async throws {
        let store = try Self.makeStore()
        let open = ATTServerContext(bearer: 1, instance: 1)
        let cccd = try #require(store.attribute(at: 0x0014))
        let access = try #require(cccd.permissions.write)
        #expect(access.denial(on: open.security) == .insufficientAuthentication)
        #expect(await store.write(try #require(store.attribute(at: 0x0011)), value: [1, 0], kind: .request, context: open) == nil)
        #expect(store.recipients(of: 0x0010).subscribers == [GATTRecipients.Subscriber(bearer: 1, configuration: .notification)])
    }
}
