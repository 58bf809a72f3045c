import BluetoothCore
@testable import GATT
import Testing

/// The Database Hash (Core 5.4 Vol 3 Part G 7.3.1) and the server's layout, against the
/// specification's Appendix B example database.
@Suite struct DatabaseHashTests {
    /// Appendix B's database declared as a server declares it: GAP, GATT (Service Changed
    /// with its CCCD, Client Supported Features, Database Hash), Glucose including Battery,
    /// and Battery as a secondary service.
    static var appendixB: [GATTDatabase.Service] {
        typealias S = GATTDatabase.Service
        typealias C = GATTDatabase.Characteristic
        typealias D = GATTDatabase.Descriptor
        return [
            S(uuid: GATTUUID.genericAccess, characteristics: [
                C(uuid: GATTUUID.deviceName, properties: [.read, .write]),
                C(uuid: GATTUUID.appearance, properties: [.read]),
            ]),
            S(uuid: GATTUUID.genericAttribute, characteristics: [
                C(uuid: GATTUUID.serviceChanged, properties: [.indicate]),
                C(uuid: GATTUUID.clientSupportedFeatures, properties: [.read, .write]),
                C(uuid: GATTUUID.databaseHash, properties: [.read]),
            ]),
            S(uuid: BluetoothUUID(UInt16(0x1808)), includes: [.init(uuid: GATTUUID.battery)], characteristics: [
                C(uuid: BluetoothUUID(UInt16(0x2A18)), properties: [.read, .indicate, .extendedProperties], descriptors: [
                    D(uuid: GATTUUID.clientCharacteristicConfiguration),
                    D(uuid: GATTUUID.characteristicExtendedProperties, value: [0x00, 0x00]),
                ]),
            ]),
            S(uuid: GATTUUID.battery, isPrimary: false, characteristics: [
                C(uuid: GATTUUID.batteryLevel, properties: [.read]),
            ]),
        ]
    }

    /// Appendix B's message, M0 to M6: what the hash authenticates.
    static let appendixBMessage = Hex.bytes(
        "010000280018020003280A0300002A04000328020500012A0600002801180700"
            + "0328200800052A090002290A0003280A0B00292B0C000328020D002A2B0E0000"
            + "2808180F000228140016000F1810000328A21100182A12000229130000290000"
            + "140001280F1815000328021600192A"
    ) ?? []

    @Test func layoutGivesAppendixBHandles() throws {
        let database = try GATTDatabase.laidOut(from: Self.appendixB)
        #expect(database.services.map(\.handles) == [0x0001...0x0005, 0x0006...0x000D, 0x000E...0x0013, 0x0014...0x0016])
        let glucose = database.services[2]
        #expect(glucose.includes == [GATTDatabase.IncludedService(handle: 0x000F, serviceHandles: 0x0014...0x0016, uuid: GATTUUID.battery)])
        #expect(glucose.characteristics.map(\.handle) == [0x0010])
        #expect(glucose.characteristics[0].descriptors.map(\.handle) == [0x0012, 0x0013])
        #expect(database.services[1].characteristics[0].descriptors.map(\.uuid) == [GATTUUID.clientCharacteristicConfiguration])
        #expect(database.services[1].characteristics[0].endHandle == 0x0009)
    }

    @Test func hashMatchesAppendixB() throws {
        let database = try GATTDatabase.laidOut(from: Self.appendixB)
        #expect(database.hashMessage.map { Hex.string($0) } == Hex.string(Self.appendixBMessage))
        // Appendix B prints the uint128 most significant octet first; the value carries it
        // least significant first.
        #expect(database.computedHash.map { Hex.string($0.reversed()) } == "F1CA2D48ECF58BAC8A8830BBB9FBA990")
    }

    /// Only the listed descriptors count, and of them only Extended Properties with its
    /// value; characteristic values never count.
    @Test func hashCoversOnlyWhatTheSpecificationLists() throws {
        let base = try GATTDatabase.laidOut(from: Self.appendixB)
        var withValue = base
        withValue.services[0].characteristics[0].value = Array("BareBLE".utf8)
        withValue.services[2].characteristics[0].descriptors[0].value = [0x02, 0x00]
        #expect(withValue.computedHash == base.computedHash)

        // A service after Appendix B's, so its descriptors move no other handle.
        func withInformation(_ descriptors: [GATTDatabase.Descriptor]) throws -> GATTDatabase {
            try GATTDatabase.laidOut(from: Self.appendixB + [
                GATTDatabase.Service(uuid: GATTUUID.deviceInformation, characteristics: [
                    GATTDatabase.Characteristic(uuid: GATTUUID.manufacturerNameString, properties: [.read], descriptors: descriptors),
                ]),
            ])
        }
        let bare = try withInformation([])
        let validRange = try withInformation([GATTDatabase.Descriptor(uuid: BluetoothUUID(UInt16(0x2906)), value: [0, 100])])
        let userDescription = try withInformation([GATTDatabase.Descriptor(uuid: GATTUUID.characteristicUserDescription, value: [0x41])])
        #expect(validRange.hashMessage == bare.hashMessage)
        #expect(userDescription.hashMessage == bare.hashMessage.map { $0 + [0x1A, 0x00, 0x01, 0x29] })

        var extendedChanged = base
        extendedChanged.services[2].characteristics[0].descriptors[1].value = [0x01, 0x00]
        #expect(extendedChanged.computedHash != base.computedHash)
    }

    /// A discovered database does not know the Extended Properties' value until it is read.
    @Test func hashNeedsTheExtendedPropertiesValue() throws {
        var database = try GATTDatabase.laidOut(from: Self.appendixB)
        database.services[2].characteristics[0].descriptors[1].value = nil
        #expect(database.computedHash == nil)
    }
}
