import BluetoothCore
import Bonding
import Foundation
import SMP
import Testing

/// What a layer above keeps per bonded peer beside the bond file.
@Suite struct BondStoreAttachmentTests {
    typealias F = BondFixtures

    @Test func anAttachmentIsKeptPerPeerAndNameAndIsNoBondFile() throws {
        let directory = F.directory()
        let store = try BondStore(directory: directory, identity: .public(F.localPublic))
        let (first, second) = (F.bond(1), F.bond(2))
        try store.save(first)
        #expect(try store.attachment("gatt-client.json", for: first.peer) == nil)
        try store.setAttachment([1, 2, 3], name: "gatt-client.json", for: first.peer)
        try store.setAttachment([4], name: "gatt-client.json", for: second.peer)
        try store.setAttachment([5, 6], name: "gatt-client.json", for: first.peer)
        #expect(try store.attachment("gatt-client.json", for: first.peer) == [5, 6])
        #expect(try store.attachment("gatt-client.json", for: second.peer) == [4])
        #expect(try store.attachment("other", for: first.peer) == nil)
        #expect(F.mode(directory + "/F00D00000001.public.C44B4D000001.random.gatt-client.json") == 0o600)
        // Listing bond files sees the bond file only, and a reopened store reads its bonds.
        #expect(try BondStore.storedIdentities(in: directory) == [DeviceAddress(F.localPublic, type: .public)])
        #expect(try BondStore(directory: directory, identity: .public(F.localPublic)).bonds == [first])
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".tmp") }.isEmpty)
    }

    /// Removing a bond removes what was kept beside it (a later bond with the same peer
    /// must not inherit an old client's CCCDs), and nobody else's.
    @Test func removingABondRemovesItsAttachments() throws {
        let directory = F.directory()
        let store = try BondStore(directory: directory, identity: .public(F.localPublic))
        let (first, second) = (F.bond(1), F.bond(2))
        try store.save(first)
        try store.save(second)
        try store.setAttachment([1], name: "gatt-client.json", for: first.peer)
        try store.setAttachment([2], name: "other", for: first.peer)
        try store.setAttachment([3], name: "gatt-client.json", for: second.peer)
        #expect(try store.remove(first.peer))
        #expect(try store.attachment("gatt-client.json", for: first.peer) == nil)
        #expect(try store.attachment("other", for: first.peer) == nil)
        #expect(try store.attachment("gatt-client.json", for: second.peer) == [3])
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).sorted() == [
            "F00D00000001.public.C44B4D000002.random.gatt-client.json", "F00D00000001.public.json",
        ].sorted())
    }

    /// A writer killed between creating its temporary file and renaming it leaves the file
    /// behind; the next write of that attachment must not fail on it forever.
    @Test func aKilledWritersLeftoverDoesNotBlockTheAttachment() throws {
        let directory = F.directory()
        let store = try BondStore(directory: directory, identity: .public(F.localPublic))
        let bond = F.bond(1)
        try store.save(bond)
        try F.write([9, 9], to: directory + "/F00D00000001.public.C44B4D000001.random.gatt-client.json.tmp")
        try store.setAttachment([3], name: "gatt-client.json", for: bond.peer)
        #expect(try store.attachment("gatt-client.json", for: bond.peer) == [3])
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".tmp") }.isEmpty)
    }
}
