import BluetoothCore
import Bonding
import Glibc
import HCITransport
@testable import KernelHost
import Testing
import TestSupport

/// The keeping of the kernel's keys (hci-raw), over a socket pair standing in for the
/// control channel.
@Suite struct KernelBondsTests {
    /// New Long Term Key for the tests' peer: a legacy key, unauthenticated.
    static func legacyKey(central: Bool, ediv: UInt16, value: UInt8) -> [UInt8] {
        KernelKeyEventTests.event(
            0x000A,
            [0x01] + KernelKeyEventTests.address + [0x00, central ? 0x01 : 0x00, 0x10, UInt8(ediv & 0xFF), UInt8(ediv >> 8)]
                + [UInt8](repeating: 0x77, count: 8) + [UInt8](repeating: value, count: 16))
    }

    /// A legacy pairing's report is two LTKs back to back (smp_notify_keys: the peer's,
    /// then ours): the pairing's wait ends with both kept, so a tool that exits when its
    /// pairing is answered keeps the key a central of ours needs to reconnect to us.
    @Test func aLegacyPairingsWaitEndsWithBothKeysKept() async throws {
        var pair: [Int32] = [-1, -1]
        #expect(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &pair) == 0)
        let sender = pair[0]
        defer { close(sender) }
        let store = try BondStore(directory: scratchDirectory(), identity: .public(BluetoothAddress(0xF00D_0000_0001)))
        let bonds = try KernelBonds.attach(
            adapter: 0, store: store,
            listen: { handler throws(TransportError) in
                try KernelKeyMonitor.start(index: 0, loop: try DescriptorLoop(fd: pair[1], spec: nil, name: "socketpair"), handler: handler)
            },
            load: {},
            // Far past what the keys take: only the whole report may end the wait, and a
            // loaded machine must not end it first (seen once in a full run at 5 s).
            keyWait: .seconds(120))
        defer { bonds.close() }

        let expectation = bonds.expectLongTermKey()
        for datagram in [Self.legacyKey(central: true, ediv: 0x1234, value: 0x11), Self.legacyKey(central: false, ediv: 0x9876, value: 0x22)] {
            #expect(send(sender, datagram, datagram.count, 0) == datagram.count)
        }
        let kept = try await bonds.longTermKeyKept(expectation)
        // First thing after the wait: the keeping task goes on to the second key at once.
        let counters = bonds.counters
        #expect(kept && counters.kept == 2, "counters: \(counters)")
        let bond = try #require(store.bond(for: KernelKeyEventTests.peer))
        #expect(bond.peerKeys.longTermKey?.ediv == 0x1234)
        #expect(bond.localKeys.longTermKey?.ediv == 0x9876)
    }

    /// A key the store could not save is logged, once, with what to do: the kernel still
    /// holds it, but forgets it at the next attach (Load Long Term Keys replaces them all).
    @Test func aKeyTheStoreCannotSaveIsLoggedAsAnError() async throws {
        var pair: [Int32] = [-1, -1]
        #expect(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &pair) == 0)
        let sender = pair[0]
        defer { close(sender) }
        let logs = LogCapture()
        let directory = scratchDirectory()
        let store = try BondStore(
            directory: directory, identity: .public(BluetoothAddress(0xF00D_0000_0002)), logger: logs.logger("bareble.bonding"))
        // A directory where the store writes its temporary file: creating it fails (EEXIST),
        // as a full disk or a read-only file system would fail the write.
        let file = String(store.path.split(separator: "/").last!)
        #expect(mkdir(directory + "/.\(file).tmp", 0o700) == 0)
        let bonds = try KernelBonds.attach(
            adapter: 0, store: store,
            listen: { handler throws(TransportError) in
                try KernelKeyMonitor.start(index: 0, loop: try DescriptorLoop(fd: pair[1], spec: nil, name: "socketpair"), handler: handler)
            },
            load: {}, keyWait: .seconds(120))
        defer { bonds.close() }

        let expectation = bonds.expectLongTermKey()
        let datagram = Self.legacyKey(central: true, ediv: 0x1234, value: 0x11)
        #expect(send(sender, datagram, datagram.count, 0) == datagram.count)
        await #expect(throws: BondStoreError.self) { try await bonds.longTermKeyKept(expectation) }
        #expect(bonds.counters.failed == 1)
        #expect(store.bond(for: KernelKeyEventTests.peer) == nil)
        let errors = logs.lines(atLeast: .warning)
        #expect(errors.count == 1, "\(errors)")
        #expect(errors.first?.level == .error)
        #expect(errors.first?.message.contains("must pair again") == true)
        #expect(errors.first?.metadata["failed"] == "1")
        #expect(errors.first?.metadata["path"] == store.path)
    }
}
