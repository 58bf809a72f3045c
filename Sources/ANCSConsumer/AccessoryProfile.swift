import ANCS
import ATT
import BareBLE
import BluetoothCore
import GATT

/// What the consumer shows the phone: advertising that solicits ANCS, and our own small
/// GATT server.
enum AccessoryProfile {
    /// Our service's UUID (random, ours): it holds the one characteristic that needs
    /// encryption.
    static let serviceUUID = BluetoothUUID(high: 0xB4AE_B1E0_A9C5_4E1F, low: 0x9D1B_3F0E_5A1C_0001)
    static let protectedUUID = BluetoothUUID(high: 0xB4AE_B1E0_A9C5_4E1F, low: 0x9D1B_3F0E_5A1C_0002)

    /// Connectable, general discoverable, ANCS in the 128-bit solicitation list (AD 0x15):
    /// what iOS looks for to offer the accessory notifications. The name goes in the scan
    /// response, where it always fits.
    static func advertising(name: String) throws(AdvertisingDataError) -> PeripheralHost.Options {
        var data = AdvertisingDataBuilder()
        data.flags(.generalDiscoverableLEOnly)
        data.solicitedServiceUUIDs([ANCSUUID.service])
        var scanResponse = AdvertisingDataBuilder()
        scanResponse.localName(name, shortenedNameToFit: true)
        // Two links: a phone that comes back before its old link's supervision timeout
        // ended still finds us advertising.
        return PeripheralHost.Options(data: try data.build(), scanResponse: try scanResponse.build(), maximumLinks: 2)
    }

    /// Device Information, and our service whose characteristic answers Insufficient
    /// Authentication until the link is encrypted: reading it is how iOS learns to pair, as
    /// Apple's accessory guidelines describe. GAP and GATT are added by the server store.
    static func services(name: String) -> [GATTDatabase.Service] {
        [
            GATTDatabase.Service(uuid: BluetoothUUID(UInt16(0x180A)), characteristics: [
                GATTDatabase.Characteristic(uuid: BluetoothUUID(UInt16(0x2A29)), properties: [.read], value: Array("BareBLE".utf8)),
                GATTDatabase.Characteristic(uuid: BluetoothUUID(UInt16(0x2A24)), properties: [.read], value: Array("bareble-ancs".utf8)),
            ]),
            GATTDatabase.Service(uuid: serviceUUID, characteristics: [
                GATTDatabase.Characteristic(
                    uuid: protectedUUID, properties: [.read], value: Array(name.utf8),
                    permissions: ATTPermissions(read: .init(protection: .encryption), write: nil)),
            ]),
        ]
    }
}
