import BluetoothCore
import Bonding
import Foundation
import HCITransport
import SMP
import Testing
import TestSupport

/// `bareble-trace read --address` with private addresses, as a user runs it: a capture of
/// two advertisers, one of them a device advertising from an RPA (the specification's ah
/// sample, Core 5.4 Vol 3 Part H D.7), its IRK given with --irk, or found in a bond store.
@Suite struct TraceAddressTool {
    static let identity = "C4:4B:4D:00:00:09"
    static let rpa = "70:81:94:0D:FB:AA"
    static let irkHex = "ec0234a357c8ad05341010a60a397d9b"

    static func report(_ address: BluetoothAddress) -> HCIPacket {
        let parameters: [UInt8] = [0x02, 0x01, 0x00, 0x01] + address.littleEndianBytes + [0x00, 0xC4]
        return HCIPacket(.event, [0x3E, UInt8(parameters.count)] + parameters)
    }

    /// A capture: the RPA advertising, a stranger, the RPA again.
    static func capture() throws -> String {
        let path = RadioPeripheral.temporaryPath("address.btsnoop")
        let writer = try BTSnoopWriter(path: path, datalink: .h4)
        for address in [rpa, "7A:00:00:00:00:01", rpa] {
            try writer.write(report(BluetoothAddress(address)!), direction: .controllerToHost)
        }
        writer.close()
        return path
    }

    static func reported(_ run: TraceTool.Run) -> [String] {
        run.output.split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["summary"] as? String
        }
    }

    @Test func anRPAResolvesWithAGivenIRKOrABondedOne() async throws {
        let capture = try Self.capture()
        defer { unlink(capture) }
        let empty = RadioPeripheral.temporaryPath("no-bonds")
        let read = ["read", capture, "--json", "--address", Self.identity]
        let plain = try await TraceTool.run(TraceTool.executable, read + ["--bond-dir", empty])
        #expect(plain.status == 0 && Self.reported(plain).isEmpty, "\(plain.output)\(plain.errors)")
        let given = try await TraceTool.run(TraceTool.executable, read + ["--bond-dir", empty, "--irk", Self.irkHex])
        #expect(given.status == 0 && Self.reported(given) == [Self.rpa, Self.rpa], "\(given.output)\(given.errors)")

        let bonds = RadioPeripheral.temporaryPath("bonds")
        defer { try? FileManager.default.removeItem(atPath: bonds) }
        let store = try BondStore(directory: bonds, identity: .public(BluetoothAddress("F0:0D:00:00:00:01")!))
        try store.save(Bond(
            peer: DeviceAddress(BluetoothAddress(Self.identity)!, type: .random),
            peerKeys: DistributedKeys(identityResolvingKey: SMPValue128(hex: Self.irkHex)),
            authenticated: false, secureConnections: true, createdAt: 0))
        let bonded = try await TraceTool.run(TraceTool.executable, read + ["--bond-dir", bonds])
        #expect(bonded.status == 0 && Self.reported(bonded) == [Self.rpa, Self.rpa], "\(bonded.output)\(bonded.errors)")
        // Named by its RPA, the bonded device is found too; a wrong IRK finds nothing.
        let byRPA = try await TraceTool.run(TraceTool.executable, ["read", capture, "--json", "--address", Self.rpa, "--bond-dir", bonds])
        #expect(Self.reported(byRPA) == [Self.rpa, Self.rpa], "\(byRPA.output)")
        let wrong = try await TraceTool.run(TraceTool.executable, read + ["--bond-dir", empty, "--irk", String(repeating: "11", count: 16)])
        #expect(wrong.status == 0 && Self.reported(wrong).isEmpty, "\(wrong.output)")
        let bad = try await TraceTool.run(TraceTool.executable, read + ["--irk", "1234"])
        #expect(bad.status != 0 && bad.errors.contains("--irk 1234"), "\(bad.errors)")
    }
}
