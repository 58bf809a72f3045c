import ArgumentParser
import BareBLE
import BluetoothCore
import GATT

/// `--profile`: a standard service with simulated values.
enum Profile: String, ExpressibleByArgument, CaseIterable {
    case heartRate = "heart-rate"
    case battery
    case deviceInformation = "device-information"

    static let heartRateMeasurement = BluetoothUUID(UInt16(0x2A37))
    static let batteryLevel = BluetoothUUID(UInt16(0x2A19))

    var service: GATTDatabase.Service {
        typealias Characteristic = GATTDatabase.Characteristic
        switch self {
        case .heartRate:
            return GATTDatabase.Service(uuid: BluetoothUUID(UInt16(0x180D)), characteristics: [
                Characteristic(uuid: Self.heartRateMeasurement, properties: [.notify], value: [0x00, 60]),
                // Body Sensor Location: chest.
                Characteristic(uuid: BluetoothUUID(UInt16(0x2A38)), properties: [.read], value: [0x01]),
            ])
        case .battery:
            return GATTDatabase.Service(uuid: BluetoothUUID(UInt16(0x180F)), characteristics: [
                Characteristic(uuid: Self.batteryLevel, properties: [.read, .notify], value: [100]),
            ])
        case .deviceInformation:
            return GATTDatabase.Service(uuid: BluetoothUUID(UInt16(0x180A)), characteristics: [
                Characteristic(uuid: BluetoothUUID(UInt16(0x2A29)), properties: [.read], value: Array("BareBLE".utf8)),
                Characteristic(uuid: BluetoothUUID(UInt16(0x2A24)), properties: [.read], value: Array("bareble-peripheral".utf8)),
                Characteristic(uuid: BluetoothUUID(UInt16(0x2A26)), properties: [.read], value: Array("1".utf8)),
            ])
        }
    }

    /// The simulation: a heart rate (flags 0, 8-bit bpm) every second, a battery level one
    /// percent lower every ten; sent only while someone subscribed (updateValue skips
    /// nobody else). Device Information is static.
    func simulate(_ manager: PeripheralManager) async {
        guard let characteristic = manager.database.characteristic(self == .heartRate ? Self.heartRateMeasurement : Self.batteryLevel),
            self != .deviceInformation
        else { return }
        var tick = 0
        while !Task.isCancelled {
            do { try await Task.sleep(for: .seconds(self == .heartRate ? 1 : 10)) } catch { return }
            tick += 1
            let value: [UInt8] = self == .heartRate ? [0x00, UInt8(60 + (tick * 7) % 40)] : [UInt8(max(1, 100 - tick))]
            // A full queue skips this beat; the next one goes when there is room.
            manager.updateValue(value, for: characteristic.valueHandle)
        }
    }
}
