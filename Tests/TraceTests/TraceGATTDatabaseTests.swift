import ATT
import BluetoothCore
import GATT
import HCITransport
import Testing
import TestSupport
import Trace

/// `gatt`'s rebuild of a peer's database from a scripted discovery
/// (TraceScript.discoveryExample), the choice of connection, and its bounds.
@Suite struct TraceGATTDatabaseTests {
    static func rebuilt(_ script: TraceScript, choosing choice: TraceGATTDatabase.Choice = .first) throws -> TraceGATTDatabase.Result? {
        var decoder = TraceDecoder(withFields: false)
        var rebuilder = TraceGATTDatabase(choosing: choice)
        for record in script.captureRecords() { rebuilder.add(decoder.decode(record)) }
        return try rebuilder.result()
    }

    @Test func theDiscoveryAndReadsMakeTheDatabase() throws {
        var script = TraceScript()
        TraceScript.discoveryExample(into: &script)
        let result = try #require(try Self.rebuilt(script))
        #expect(result.peer == DeviceAddress(TraceScript.examplePeer, type: .random))
        #expect(result.mtu == 23 && result.connection == 0x0040)
        #expect(result.database.databaseHash == nil)
        let services = result.database.services
        #expect(services.map(\.uuid) == [BluetoothUUID(UInt16(0x1800)), BluetoothUUID(UInt16(0x180F))])
        #expect(services.map(\.handles) == [0x0001...0x0005, 0x0006...0x000A])
        let name = try #require(services[0].characteristics.first)
        #expect(name.uuid == GATTUUID.deviceName && name.valueHandle == 0x0003 && name.endHandle == 0x0005)
        #expect(name.value == TraceScript.exampleName)
        #expect(name.descriptors.map(\.handle) == [0x0004] && name.descriptors.first?.value == Array("Name".utf8))
        let battery = try #require(services[1].characteristics.first)
        #expect(battery.valueHandle == 0x0008 && battery.endHandle == 0x000A && battery.properties.rawValue == 0x12)
        #expect(battery.value == nil)
        #expect(result.failures == [0x0008: .init(request: .readRequest, code: .insufficientAuthentication)])
        #expect(battery.descriptors.map(\.uuid) == [GATTUUID.clientCharacteristicConfiguration] && battery.descriptors.first?.value == [0, 0])
    }

    /// Two connections: the first without a discovery, the second to another peer with one.
    /// The default takes the second; --address and --connection choose; a peer never
    /// discovered gives nothing.
    @Test func theConnectionIsChosen() throws {
        var script = TraceScript()
        script.connected(0x0040, peer: TraceScript.examplePeer)
        script.exchange([0x0A, 0x03, 0x00], [0x0B, 0x41], handle: 0x0040)
        script.disconnected(0x0040)
        let other = BluetoothAddress(0xC4_4B_4D_00_00_09)
        TraceScript.discoveryExample(into: &script, handle: 0x0041, peer: other)
        #expect(try Self.rebuilt(script)?.peer?.address == other)
        #expect(try Self.rebuilt(script, choosing: .connection(0x0041))?.connection == 0x0041)
        #expect(try Self.rebuilt(script, choosing: .address(other))?.database.services.count == 2)
        #expect(try Self.rebuilt(script, choosing: .address(TraceScript.examplePeer)) == nil)
        #expect(try Self.rebuilt(script, choosing: .connection(0x0040)) == nil)
    }

    /// A peer that answers one Find Information after another with new handles, 70,000
    /// in all: what is kept stops at the bound and the rest is counted.
    @Test func handlesKeptAreBounded() async throws {
        try await cpuBound { () throws in
            var script = TraceScript()
            TraceScript.discoveryExample(into: &script)
            for first in stride(from: 0, to: 70_000, by: 5) {
                var answer: [UInt8] = [0x05, 0x01]
                for offset in 0..<5 {
                    let handle = UInt16(truncatingIfNeeded: first + offset)
                    answer += [UInt8(handle & 0xFF), UInt8(handle >> 8), 0x01, 0x29]
                }
                script.exchange([0x04, 0x01, 0x00, 0xFF, 0xFF], answer)
            }
            var decoder = TraceDecoder(withFields: false)
            var rebuilder = TraceGATTDatabase()
            for record in script.captureRecords() { rebuilder.add(decoder.decode(record)) }
            #expect(rebuilder.forgottenAttributes > 60_000)
            #expect(try rebuilder.result()?.database.services.count == 2)
        }
    }
}
