import BluetoothCore
import Bonding
import Foundation
import SMP
import Testing
import TestSupport

/// `bareble-central bonds`, the built executable, over bond files the library wrote.
@Suite(.serialized) struct BondsTool {
    static let sampleIRK = SMPValue128(hex: "ec0234a3 57c8ad05 341010a6 0a397d9b")!
    static let peerA = DeviceAddress(BluetoothAddress("C4:4B:4D:00:0B:01")!, type: .random)
    static let peerB = DeviceAddress(BluetoothAddress("00:1B:DC:00:00:02")!, type: .public)

    func makeStore() throws -> (directory: String, store: BondStore) {
        let directory = TestScratch.path("bondstool") + "/bonds"
        let store = try BondStore(directory: directory, identity: .public(BluetoothAddress("F0:0D:00:00:00:01")!))
        try store.save(Bond(
            peer: Self.peerA,
            peerKeys: DistributedKeys(longTermKey: LongTermKey(key: SMPValue128(0x1234), ediv: 0, rand: 0, keySize: 16), identityResolvingKey: Self.sampleIRK),
            authenticated: true, secureConnections: true, createdAt: 1_763_788_800))
        try store.save(Bond(
            peer: Self.peerB,
            peerKeys: DistributedKeys(longTermKey: LongTermKey(key: SMPValue128(0x5678), ediv: 0x1234, rand: 99, keySize: 7)),
            authenticated: false, secureConnections: false, createdAt: 1_700_000_000))
        return (directory, store)
    }

    func run(_ arguments: [String], environment: [String: String] = [:]) async throws -> CentralTool.Run {
        try await onOwnThread { try CentralTool.runBlocking(arguments, environment: environment) }
    }

    @Test func listShowsBondsButNoKeys() async throws {
        let (directory, _) = try makeStore()
        let text = try await run(["bonds", "list", "--bond-dir", directory])
        #expect(text.status == 0, "\(text.errors)")
        #expect(text.output.contains("F0:0D:00:00:00:01/public (2 bonds"))
        #expect(text.output.contains("C4:4B:4D:00:0B:01/random  secure connections, authenticated  keys: ltk/16,irk  since 2025-11-22 05:20:00 UTC"))
        #expect(text.output.contains("00:1B:DC:00:00:02/public  legacy, unauthenticated  keys: ltk/7"))
        #expect(!text.output.lowercased().contains("ec0234a3"))

        let json = try await run(["bonds", "--bond-dir", directory, "--json"])
        #expect(json.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
        let identities = try #require(object["identities"] as? [[String: Any]])
        #expect(identities.count == 1)
        #expect(identities[0]["local"] as? String == "F0:0D:00:00:00:01/public")
        let bonds = try #require(identities[0]["bonds"] as? [[String: Any]])
        #expect(bonds.map { $0["peer"] as? String } == ["00:1B:DC:00:00:02", "C4:4B:4D:00:0B:01"])
        #expect(bonds[1]["peer_keys"] as? [String] == ["ltk/16", "irk"])
        #expect(!json.output.contains("ec0234a3"))
    }

    @Test func removeByIdentityOrByAnRPA() async throws {
        let (directory, store) = try makeStore()
        // The specification's sample RPA of the sample IRK names peer A.
        let removed = try await run(["bonds", "remove", "70:81:94:0D:FB:AA/random", "--bond-dir", directory])
        #expect(removed.status == 0, "\(removed.errors)")
        #expect(removed.output.contains("removed C4:4B:4D:00:0B:01/random"))
        #expect(store.bonds.map(\.peer) == [Self.peerB])

        let again = try await run(["bonds", "remove", "C4:4B:4D:00:0B:01", "--bond-dir", directory])
        #expect(again.status == 1)
        #expect(again.errors.contains("no bond for C4:4B:4D:00:0B:01"))

        let json = try await run(["bonds", "remove", "00:1B:DC:00:00:02", "--bond-dir", directory, "--json"])
        #expect(json.status == 0)
        #expect(json.output.contains("\"peer\":\"00:1B:DC:00:00:02/public\""))
        #expect(store.bonds.isEmpty)
    }

    @Test func aDamagedFileIsReportedAndKept() async throws {
        let (directory, store) = try makeStore()
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: store.path)))
        bytes.removeLast(40)
        try Data(bytes).write(to: URL(fileURLWithPath: store.path))
        let list = try await run(["bonds", "list", "--bond-dir", directory])
        #expect(list.status == 1)
        #expect(list.errors.contains("is damaged"))
        #expect(list.errors.contains("move it aside"))
        let remove = try await run(["bonds", "remove", "C4:4B:4D:00:0B:01", "--bond-dir", directory])
        #expect(remove.status != 0)
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: store.path))) == bytes)
    }

    @Test func theDefaultDirectoryFollowsXDGStateHome() async throws {
        let (directory, _) = try makeStore()
        // directory = STATE/bonds; the default is $XDG_STATE_HOME/bareble/bonds.
        let state = (directory as NSString).deletingLastPathComponent + "/state"
        try FileManager.default.createDirectory(atPath: state + "/bareble", withIntermediateDirectories: true)
        try FileManager.default.moveItem(atPath: directory, toPath: state + "/bareble/bonds")
        let list = try await run(["bonds", "--json"], environment: ["XDG_STATE_HOME": state])
        #expect(list.status == 0, "\(list.errors)")
        #expect(list.output.contains("\"directory\":\"\(state)/bareble/bonds\""))
        #expect(list.output.contains("C4:4B:4D:00:0B:01"))
    }
}
