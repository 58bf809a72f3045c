import ATT
import BareBLE
import BluetoothCore
import GATT
import Testing
import TestSupport

/// What Bumble's GATT client has no call for, sent as raw requests through it: Read
/// Multiple Variable, and robust caching (Core 5.4 Vol 3 Part G 2.5.2.1) as a change-unaware
/// client meets it.
extension PeripheralManagerVirtualRadio {
    /// `value` as ATT's little-endian 16-bit field, in hex.
    static func le(_ value: UInt16) -> String { Hex.string([UInt8(value & 0xFF), UInt8(value >> 8)]).lowercased() }

    static func request(_ name: String, _ pdu: String) async throws -> String {
        let ack = try await PeripheralRadio.central(name, "request \(pdu)")
        return try #require(ack["response"] as? String, "\(ack)")
    }

    @Test("Read Multiple Variable from Bumble: each value with its full length, the list cut at ATT_MTU - 1 inside the last value")
    func readMultipleVariable() async throws {
        let served = try await serve("BareBLE-PM-RMV")
        defer { served.central.close() }
        let (manager, name) = (served.manager, served.name)
        let battery = try #require(manager.database.characteristic(Self.batteryLevel)).valueHandle
        let computed = try #require(manager.database.characteristic(Self.computed)).valueHandle
        let long = try #require(manager.database.characteristic(Self.long)).valueHandle
        let ack = try await PeripheralRadio.central(name, "request 20" + [battery, computed, 0x0003, long].map(Self.le).joined())
        #expect(ack["name"] as? String == "ATT_Read_Multiple_Variable_Response", "\(ack)")
        let response = try #require(Hex.bytes(ack["response"] as? String ?? ""))
        #expect(response.first == 0x21 && response.count == 247)

        var tuples: [(length: Int, value: [UInt8])] = []
        var rest = response.dropFirst()
        while rest.count >= 2 {
            let length = Int(rest[rest.startIndex]) | Int(rest[rest.startIndex + 1]) << 8
            let value = Array(rest.dropFirst(2).prefix(length))
            tuples.append((length, value))
            rest = rest.dropFirst(2 + value.count)
        }
        let expected = [[87], Array("bearer \(served.link.handle)".utf8), Array("BareBLE-PM-RMV".utf8)]
        #expect(tuples.count == 4)
        for (tuple, value) in zip(tuples, expected) { #expect(tuple.length == value.count && tuple.value == value) }
        let cut = 246 - expected.map { 2 + $0.count }.reduce(0, +) - 2
        #expect(tuples.last?.length == Self.longValue.count && tuples.last?.value == Array(Self.longValue.prefix(cut)))
    }

    @Test("robust caching with Bumble as a change-unaware client: 0x12 once, commands ignored meanwhile, reading the Database Hash makes it aware")
    func robustCaching() async throws {
        let served = try await serve("BareBLE-PM-RC")
        defer { served.central.close() }
        let (manager, name) = (served.manager, served.name)
        let battery = try #require(manager.database.characteristic(Self.batteryLevel)).valueHandle
        let long = try #require(manager.database.characteristic(Self.long)).valueHandle
        let features = try #require(manager.database.characteristic(GATTUUID.clientSupportedFeatures)).valueHandle
        let readBattery = "0a" + Self.le(battery)
        #expect(try await PeripheralRadio.central(name, "write \(features) 01")["written"] as? Bool == true)
        #expect(try await Self.request(name, readBattery) == "0b57")

        // Not subscribed to Service Changed: a change leaves Bumble change-unaware.
        let service = GATTDatabase.Service(uuid: BluetoothUUID(UInt16(0x181C)), characteristics: [
            .init(uuid: BluetoothUUID(UInt16(0x2A8A)), properties: [.read], value: Array("Ada".utf8)),
        ])
        _ = try manager.add([service])
        // A Write Command meanwhile is ignored (2.5.2.1); the PDUs are handled in order, so
        // the reads after it show it had no effect.
        try await PeripheralRadio.central(name, "att 52" + Self.le(long) + "eeee")
        #expect(try await Self.request(name, readBattery) == "010a" + Self.le(battery) + "12")
        #expect(try await Self.request(name, readBattery) == "0b57")
        #expect(try await Self.request(name, "0a" + Self.le(long)).hasPrefix("0b" + Hex.string(Array(Self.longValue.prefix(8))).lowercased()))

        // Another change; this time Bumble reads the Database Hash (Read By Type 0x2B2A),
        // which is answered and makes it change-aware: the next request is served.
        _ = try manager.add([service])
        let hash = try await Self.request(name, "08" + Self.le(0x0001) + Self.le(0xFFFF) + "2a2b")
        let databaseHash = manager.store.databaseHash
        #expect(hash == "0912" + Self.le(manager.database.characteristic(GATTUUID.databaseHash)?.valueHandle ?? 0) + Hex.string(databaseHash).lowercased())
        #expect(try await Self.request(name, readBattery) == "0b57")
    }
}
