import BluetoothCore
import Bonding
import Foundation
import HCI
import HCITransport
import SMP
import Testing
import TestSupport

/// Privacy on the air of the virtual radio: a Bumble peer that advertises from RPAs made
/// by Bumble's own ah is recognised through the bond store's IRKs, and our own rotating
/// RPAs are heard by Bumble's scanner from two addresses that both resolve with our IRK.
@Suite(.serialized) struct PrivacyVirtualRadio {
    static let harness = Result { try RadioHarness(arguments: ["--tcp", "--scanner"]) }
    /// The radio's `private` peer's identity (README: never on the air itself).
    static let privateIdentity = DeviceAddress(BluetoothAddress("C4:4B:4D:00:00:06")!, type: .random)
    /// The specification's ah sample IRK (vectors.md) as the bonded peer's IRK.
    static let bondedIRK = SMPValue128(hex: "ec0234a3 57c8ad05 341010a6 0a397d9b")!
    static let strangerIRK = SMPValue128(hex: "00112233 44556677 8899aabb ccddeeff")!

    static func temporaryDirectory() -> String {
        TestScratch.path("privacy")
    }

    func powerOn(_ harness: RadioHarness) async throws -> HCIController {
        let controller = HCIController(transport: try TCPTransport.connect(host: "127.0.0.1", port: harness.radio.tcpPort))
        try controller.start()
        try await controller.powerOn()
        return controller
    }

    /// Makes the radio's private peer advertise from a fresh RPA of `irk`; its address.
    func peerAdvertises(_ harness: RadioHarness, irk: SMPValue128) async throws -> BluetoothAddress {
        let line = "rpa-advertise \(Hex.string(irk.bigEndianBytes))"
        let ack = try await onOwnThread {
            try harness.radio.send(controlLine: line)
            return RadioAck(object: try harness.waitForEventBlocking("ack") { $0["command"] as? String == line })
        }
        let text = try #require(ack.object["address"] as? String)
        return try #require(BluetoothAddress(text))
    }

    struct RadioAck: @unchecked Sendable { var object: [String: Any] }
    struct NotHeard: Error { var address: BluetoothAddress }

    /// The first advertisement from `address`. How soon it comes is not what these tests
    /// are about: the deadline is generous, as a loaded CI machine's radio can lag.
    func firstReport(from address: BluetoothAddress, scanner: HCI.Scanner) async throws -> Advertisement {
        let stream = scanner.advertisements()
        return try await withDeadline("an advertisement from \(address)") {
            for try await advertisement in stream where advertisement.address.address == address { return advertisement }
            throw NotHeard(address: address)
        }
    }

    @Test func aBondedPeerIsRecognisedFromANewResolvablePrivateAddress() async throws {
        let harness = try Self.harness.get()
        let store = try BondStore(directory: Self.temporaryDirectory(), identity: .randomStatic(nil))
        var random = SeededRandom(seed: 0x9E_1001)
        try store.save(Bond(
            peer: Self.privateIdentity,
            peerKeys: DistributedKeys(longTermKey: LongTermKey(key: .random(using: &random), ediv: 0, rand: 0, keySize: 16),
                                      identityResolvingKey: Self.bondedIRK),
            authenticated: true, secureConnections: true, createdAt: 1_763_788_800))
        // Another bonded peer with another IRK, which must not claim the address.
        try store.save(Bond(
            peer: DeviceAddress(BluetoothAddress("C4:4B:4D:00:0A:01")!, type: .random),
            peerKeys: DistributedKeys(identityResolvingKey: .random(using: &random)),
            authenticated: false, secureConnections: true, createdAt: 1_763_788_800))
        let resolver = store.resolver

        let controller = try await powerOn(harness)
        defer { controller.close() }
        let scanner = HCI.Scanner(controller: controller)

        // Two addresses in a row from the bonded IRK, as the peer rotates.
        var addresses: [BluetoothAddress] = []
        for _ in 0..<2 {
            let rpa = try await peerAdvertises(harness, irk: Self.bondedIRK)
            let report = try await firstReport(from: rpa, scanner: scanner)
            #expect(report.address.type == .random)
            #expect(report.address.kind == .resolvablePrivate)
            #expect(resolver.identity(for: report.address) == Self.privateIdentity)
            #expect(store.bond(for: report.address)?.peerKeys.identityResolvingKey == Self.bondedIRK)
            addresses.append(rpa)
        }
        #expect(addresses[0] != addresses[1])

        // The same device with an IRK nobody bonded with: not mapped.
        let strangerRPA = try await peerAdvertises(harness, irk: Self.strangerIRK)
        let report = try await firstReport(from: strangerRPA, scanner: scanner)
        #expect(report.address.kind == .resolvablePrivate)
        #expect(resolver.bond(for: report) == nil)
    }

    @Test func ourRotatingRPAsAreHeardAndResolveWithOurIRK() async throws {
        let harness = try Self.harness.get()
        let store = try BondStore(directory: Self.temporaryDirectory(), identity: .randomStatic(nil))
        let controller = try await powerOn(harness)
        defer { controller.close() }
        let name = "BareBLE-RPA-\(UInt16.random(in: 0...UInt16.max))"
        let data: [UInt8] = [0x02, 0x01, 0x06, UInt8(name.utf8.count + 1), 0x09] + Array(name.utf8)
        let expected = Hex.string(data).lowercased()

        let advertising = try await PrivateAdvertising(
            advertiser: Advertiser(controller: controller), identity: store.local,
            parameters: AdvertisingParameters(kind: .nonConnectableUndirected, interval: .milliseconds(20)),
            data: AdvertisingData(data), interval: .milliseconds(600))
        let first = advertising.address
        // Heard from two different addresses: the first, then a rotated one.
        var heard: [BluetoothAddress] = []
        let deadline = ContinuousClock.now + .seconds(10)
        while heard.count < 2 {
            let event = try await harness.waitForEvent("heard", timeout: max(deadline - ContinuousClock.now, .milliseconds(1))) { event in
                event["data"] as? String == expected
            }
            let text = try #require(event["address"] as? String)
            let address = try #require(BluetoothAddress(text))
            #expect(event["address_type"] as? String == "random")
            if !heard.contains(address) { heard.append(address) }
        }
        try await advertising.stop()

        #expect(heard[0] == first)
        #expect(heard[0] != heard[1])
        for address in heard {
            #expect(DeviceAddress(address, type: .random).kind == .resolvablePrivate)
            #expect(address.resolves(with: store.local.identityResolvingKey))
            // As a bonded peer that holds our IRK sees us.
            let peerView = BondResolver(bonds: [Bond(
                peer: store.local.address, peerKeys: DistributedKeys(identityResolvingKey: store.local.identityResolvingKey),
                authenticated: true, secureConnections: true, createdAt: 0)])
            #expect(peerView.identity(for: DeviceAddress(address, type: .random)) == store.local.address)
            #expect(!address.resolves(with: Self.strangerIRK))
        }
    }
}
