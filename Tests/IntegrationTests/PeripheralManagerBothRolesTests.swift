import BareBLE
import BluetoothCore
import GATT
import HCI
import HCITransport
import Testing
import TestSupport

/// One Central in both roles at once: serving a Bumble central through `PeripheralManager`
/// while it connects, as a central, to the radio's big peripheral and reads it.
extension PeripheralToolVirtualRadio {
    @Test("one Central serves a connected central and at the same time connects to a peripheral and reads it")
    func centralAndPeripheralAtOnce() async throws {
        let harness = try Self.harness.get()
        let central = try Central.open(.tcp(host: "127.0.0.1", port: harness.radio.tcpPort))
        defer { central.close() }
        try await central.powerOn()
        let address = try #require(central.controller.info?.address)
        let manager = try PeripheralManager(
            central: central, advertising: try PeripheralRadio.options(name: "BareBLE-Both"),
            services: [GATTDatabase.Service(uuid: BluetoothUUID(UInt16(0x180F)), characteristics: [
                .init(uuid: BluetoothUUID(UInt16(0x2A19)), properties: [.read], value: [77]),
            ])])
        let events = EventReader(manager.events())
        try await manager.startAdvertising()
        let log = try Self.log.get()
        let name = try #require(try await log.control("add-central")["peer"] as? String)
        try await log.control("central \(name) connect \(address)", timeout: .seconds(20))
        _ = try await events.next("connection") { event -> Bool? in if case .host(.connected) = event { true } else { nil } }

        // The discovery of 34 services is not what this test times: in a full CI run
        // (every suite at once on 2 cores) it once took the radio over the default 120 s.
        let peripheral = try await central.connect(to: Self.big, procedureTimeout: .seconds(600))
        try await peripheral.discoverServices()
        let deviceName = try #require(peripheral.characteristic(GATTUUID.deviceName))
        try await peripheral.readValue(for: deviceName)
        #expect(deviceName.value == Array("BareBLE-Big".utf8))
        let level = try #require(manager.database.characteristic(BluetoothUUID(UInt16(0x2A19)))).valueHandle
        #expect(try await log.control("central \(name) read \(level)")["value"] as? String == "4d")
        #expect(manager.centrals.count == 1)
        try await peripheral.disconnect()
    }
}
