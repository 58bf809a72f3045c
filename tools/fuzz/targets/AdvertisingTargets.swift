import Beacon
import BluetoothCore

/// Advertising payloads from any device in range: AD structures and beacon frames.
enum AdvertisingTargets {
    @Sendable static func advertisingData(_ bytes: [UInt8]) {
        let data = AdvertisingData(bytes)
        var structures = 0
        for _ in data.structures { structures += 1 }
        expect(structures <= bytes.count / 2 + 1, "\(structures) structures in \(bytes.count) bytes")
        _ = (data.flags, data.serviceUUIDs, data.hasCompleteServiceList, data.localName, data.txPowerLevel)
        _ = (data.serviceData, data.manufacturerData, data.appearance, data.solicitedServiceUUIDs)
        _ = (data.publicTargetAddresses, data.randomTargetAddresses, data.advertisingInterval, data.uri)
        _ = (data.leSupportedFeatures, data.leBluetoothDeviceAddress, data.broadcastName, data.peripheralConnectionIntervalRange)
        _ = (data.malformations, data.isWellFormed, data.description)
    }

    /// The payload as a whole advertisement and as bare frames, through every beacon decoder.
    @Sendable static func beacon(_ bytes: [UInt8]) {
        let data = AdvertisingData(bytes)
        _ = (IBeacon.decode(data), AltBeacon.decode(data), EddystoneFrame.decode(data))
        _ = (IBeacon.decode(manufacturerPayload: bytes), EddystoneFrame.decode(frame: bytes))
        for manufacturer in data.manufacturerData { _ = AltBeacon.decode(manufacturer) }
    }
}
