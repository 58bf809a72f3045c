import BareBLE
import BluetoothCore
import Bonding
import Foundation
import HCI
import SMP
import Testing
import TestSupport

/// Privacy as a peripheral (Core Vol 3 Part C 10.7): with `SecurityPolicy.privacy` our
/// advertising goes out from resolvable private addresses of the bond store's IRK; a
/// central connects to one and pairs over it (SMP binds c1/f5/f6 to that address, so a
/// wrong local address fails the DHKey check), and the next advertising uses a new one.
@Suite(.serialized) struct PeripheralHostPrivacy {
    @Test("we advertise from our RPA; a central connects to it and pairs; readvertising takes a fresh RPA")
    func advertisesFromOurRPA() async throws {
        let central = try await PeripheralRadio.open()
        defer { central.close() }
        let controllerAddress = try #require(central.controller.info?.address)
        let directory = TestScratch.path("peripheral-privacy")
        let bonds = try BondStore(directory: directory, identity: .public(controllerAddress))
        central.security = SecurityPolicy(bonds: bonds, privacy: true)
        let host = try PeripheralHost(central: central, options: try PeripheralRadio.options(name: "BareBLE-Private"))
        let events = HostEvents(host)
        try await host.start()
        let first = try await events.next("advertising") { if case let .advertising(from) = $0 { from } else { nil } }
        #expect(first.kind == .resolvablePrivate)
        #expect(first.address.resolves(with: bonds.local.identityResolvingKey))
        #expect(host.advertisingAddress == first)

        let name = try await PeripheralRadio.addCentral()
        try await PeripheralRadio.log.get().control("pairing \(name) io=no-input-no-output sc=1 mitm=0 bonding=1")
        try await PeripheralRadio.central(name, "connect \(first.address) random")
        let link = try await events.connected()
        let ack = try await PeripheralRadio.central(name, "pair", timeout: .seconds(45))
        #expect(ack["paired"] as? Bool == true, "\(ack)")
        #expect(link.isEncrypted)
        let next = try await events.next("advertising again") { if case let .advertising(from) = $0 { from } else { nil } }
        #expect(next != first)
        #expect(next.kind == .resolvablePrivate && next.address.resolves(with: bonds.local.identityResolvingKey))
        // Bumble says paired once it sent its keys, the initiator's, which come last: our
        // side saves the bond when they arrive, which may be just after.
        let peer = try PeripheralRadio.address(of: name)
        try await waitUntil({ bonds.bond(for: peer) != nil }, timeout: .seconds(30))

        // Without a bond store there is no IRK: refused with what to do.
        let other = try await PeripheralRadio.open()
        defer { other.close() }
        other.security = SecurityPolicy(privacy: true)
        #expect(throws: PeripheralHostError.privacyNeedsBondStore) {
            _ = try PeripheralHost(central: other, options: try PeripheralRadio.options(name: "BareBLE-NoStore"))
        }
    }
}
