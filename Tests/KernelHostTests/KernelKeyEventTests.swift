import BluetoothCore
import Glibc
import HCITransport
@testable import KernelHost
import Testing
import TestSupport

/// The management interface's key events (BlueZ doc/mgmt-api.txt), byte for byte as the
/// document lays them out, and what a hostile or broken channel can send instead.
@Suite struct KernelKeyEventTests {
    static let peer = DeviceAddress(BluetoothAddress(0xC44B_4D00_0001), type: .random)
    /// C4:4B:4D:00:00:01, LE random (2): address little endian, then its type.
    static let address: [UInt8] = [0x01, 0x00, 0x00, 0x4D, 0x4B, 0xC4, 0x02]
    static let value = Array(UInt8(0x00)...UInt8(0x0F))

    static func event(_ code: UInt16, index: UInt16 = 0, _ parameters: [UInt8]) -> [UInt8] {
        [UInt8(code & 0xFF), UInt8(code >> 8), UInt8(index & 0xFF), UInt8(index >> 8), UInt8(parameters.count & 0xFF), UInt8(parameters.count >> 8)] + parameters
    }

    /// New Long Term Key (0x000A): Store_Hint, Address, Address_Type, Key_Type, Central,
    /// Encryption_Size, Encryption_Diversifier (2), Random_Number (8), Value (16).
    static let longTermKeyParameters: [UInt8] = [0x01] + address + [0x03, 0x00, 0x10, 0x34, 0x12]
        + [0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11] + value

    @Test func newLongTermKey() throws {
        #expect(Self.longTermKeyParameters.count == 37)
        let received = try #require(try KernelKeyEvent.decode(Self.event(0x000A, Self.longTermKeyParameters)))
        #expect(received.index == 0 && received.persistent)
        let expected = KernelKeys.LongTermKey(
            peer: Self.peer, type: .authenticatedP256, central: false, keySize: 16, ediv: 0x1234, rand: 0x1122_3344_5566_7788, value: Self.value)
        #expect(received.event == .longTermKey(expected))
        #expect(expected.type.isAuthenticated && expected.type.isSecureConnections)
        // Store_Hint 0 (no bonding): decoded, not persistent; a legacy key for the central role.
        var legacy = Self.longTermKeyParameters
        legacy[0] = 0
        legacy[8] = 0x00
        legacy[9] = 0x01
        let notKept = try #require(try KernelKeyEvent.decode(Self.event(0x000A, legacy)))
        guard case let .longTermKey(key) = notKept.event else { Issue.record("\(notKept)"); return }
        #expect(!notKept.persistent && key.type == .unauthenticatedLegacy && key.central)
    }

    /// New Identity Resolving Key (0x0018): Store_Hint, Random_Address (6), Address,
    /// Address_Type, Value (16). New CSRK (0x0019): Store_Hint, Address, Address_Type,
    /// Type, Value. New Connection Parameter (0x001C): Address, Address_Type, Store_Hint,
    /// Min/Max interval, latency, timeout.
    @Test func newIdentityResolvingKeySignatureKeyAndConnectionParameters() throws {
        let rpa: [UInt8] = [0x11, 0x22, 0x33, 0x44, 0x55, 0x66]
        let irk = try #require(try KernelKeyEvent.decode(Self.event(0x0018, index: 1, [0x01] + rpa + Self.address + Self.value)))
        #expect(irk.index == 1 && irk.event == .identityResolvingKey(
            KernelKeys.IdentityResolvingKey(peer: Self.peer, value: Self.value), resolvablePrivateAddress: BluetoothAddress(0x6655_4433_2211)))
        let csrk = try #require(try KernelKeyEvent.decode(Self.event(0x0019, [0x01] + Self.address + [0x03] + Self.value)))
        guard case let .signatureKey(key) = csrk.event else { Issue.record("\(csrk)"); return }
        #expect(key.isRemote && key.isAuthenticated && key.value == Self.value && key.peer == Self.peer)
        let parameters = try #require(try KernelKeyEvent.decode(Self.event(0x001C, Self.address + [0x01, 0x18, 0x00, 0x28, 0x00, 0x00, 0x00, 0x2A, 0x00])))
        #expect(parameters.persistent && parameters.event == .connectionParameters(
            KernelKeys.ConnectionParameters(peer: Self.peer, minimumInterval: 0x18, maximumInterval: 0x28, latency: 0, supervisionTimeout: 0x2A)))
    }

    @Test func otherEventsAreNotKeys() throws {
        // User Confirmation Request (0x000F) and Command Complete: the channel carries them too.
        #expect(try KernelKeyEvent.decode(Self.event(0x000F, Self.address + [0x01, 0, 0, 0, 0])) == nil)
        #expect(try KernelKeyEvent.decode(Self.event(0x0001, [0x05, 0x00, 0x00])) == nil)
    }

    /// Every prefix of every key event, a header whose length lies, and each field outside
    /// its range: a typed error, never a trap or a read past the end.
    @Test func malformedKeyEventsAreErrors() throws {
        let events = [
            Self.event(0x000A, Self.longTermKeyParameters),
            Self.event(0x0018, [0x01] + [UInt8](repeating: 0x11, count: 6) + Self.address + Self.value),
            Self.event(0x0019, [0x01] + Self.address + [0x01] + Self.value),
            Self.event(0x001C, Self.address + [0x01, 0x18, 0x00, 0x28, 0x00, 0x00, 0x00, 0x2A, 0x00]),
        ]
        for bytes in events {
            #expect(try KernelKeyEvent.decode(bytes) != nil)
            for count in 0..<bytes.count {
                // A short datagram, and a short one whose header says so (truncated parameters).
                #expect(throws: DecodeError.self) { try KernelKeyEvent.decode(Array(bytes.prefix(count))) }
                if count >= 6 {
                    let parameters = Array(bytes[6..<count])
                    #expect(throws: DecodeError.self) { try KernelKeyEvent.decode(Self.event(UInt16(bytes[0]) | UInt16(bytes[1]) << 8, parameters)) }
                }
            }
            var lying = bytes
            lying[4] &+= 1
            #expect(throws: DecodeError.lengthMismatch(declared: bytes.count - 5, actual: bytes.count - 6)) { try KernelKeyEvent.decode(lying) }
        }
        func ltk(_ offset: Int, _ value: UInt8) -> [UInt8] {
            var parameters = Self.longTermKeyParameters
            parameters[offset] = value
            return Self.event(0x000A, parameters)
        }
        #expect(throws: DecodeError.invalidValue(field: "Store_Hint", value: 2)) { try KernelKeyEvent.decode(ltk(0, 2)) }
        #expect(throws: DecodeError.invalidValue(field: "mgmt address type", value: 0)) { try KernelKeyEvent.decode(ltk(7, 0)) }
        #expect(throws: DecodeError.invalidValue(field: "LTK key type", value: 5)) { try KernelKeyEvent.decode(ltk(8, 5)) }
        #expect(throws: DecodeError.invalidValue(field: "LTK central", value: 2)) { try KernelKeyEvent.decode(ltk(9, 2)) }
        #expect(throws: DecodeError.invalidValue(field: "LTK encryption size", value: 6)) { try KernelKeyEvent.decode(ltk(10, 6)) }
        #expect(throws: DecodeError.invalidValue(field: "LTK encryption size", value: 17)) { try KernelKeyEvent.decode(ltk(10, 17)) }
        #expect(throws: DecodeError.invalidValue(field: "CSRK type", value: 4)) {
            try KernelKeyEvent.decode(Self.event(0x0019, [0x01] + Self.address + [0x04] + Self.value))
        }
    }

    /// Load Long Term Keys takes the record New Long Term Key carried, byte for byte; Load
    /// Identity Resolving Keys and Load Connection Parameters likewise; a debug key and a
    /// random peer that is not static are left out (the kernel would refuse the command).
    @Test func loadCommandsCarryTheEventsRecords() throws {
        let received = try #require(try KernelKeyEvent.decode(Self.event(0x000A, Self.longTermKeyParameters)))
        guard case let .longTermKey(key) = received.event else { Issue.record("\(received)"); return }
        var writer = ByteWriter()
        key.write(to: &writer)
        #expect(writer.bytes == Array(Self.longTermKeyParameters.dropFirst()))
        #expect(KernelManagement.list([key, key]) { $0.write(to: &$1) } == [0x02, 0x00] + writer.bytes + writer.bytes)

        var irk = ByteWriter()
        KernelKeys.IdentityResolvingKey(peer: Self.peer, value: Self.value).write(to: &irk)
        #expect(irk.bytes == Self.address + Self.value)
        var parameters = ByteWriter()
        KernelKeys.ConnectionParameters(peer: Self.peer, minimumInterval: 0x18, maximumInterval: 0x28, latency: 0, supervisionTimeout: 0x2A).write(to: &parameters)
        #expect(parameters.bytes == Self.address + [0x18, 0x00, 0x28, 0x00, 0x00, 0x00, 0x2A, 0x00])

        #expect(KernelManagement.isIdentity(Self.peer))
        #expect(KernelManagement.isIdentity(DeviceAddress(BluetoothAddress(0x1122_3344_5566), type: .public)))
        #expect(!KernelManagement.isIdentity(DeviceAddress(BluetoothAddress(0x4B22_3344_5566), type: .random)))
    }

    /// The monitor over a socket pair standing in for the control channel: a malformed key
    /// event is counted and dropped, other adapters' keys and other events are skipped,
    /// and the good key after them still arrives.
    @Test func theMonitorCountsMalformedEventsAndGoesOn() throws {
        var pair: [Int32] = [-1, -1]
        #expect(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &pair) == 0)
        let sender = pair[0]
        defer { close(sender) }
        let loop = try DescriptorLoop(fd: pair[1], spec: nil, name: "socketpair")
        let keys = Inbox<KernelKeyEvent.Received>()
        let monitor = try KernelKeyMonitor.start(index: 0, loop: loop) { keys.put($0) }
        defer { monitor.close() }
        let good = Self.event(0x000A, Self.longTermKeyParameters)
        for datagram in [
            Array(good.prefix(20)),  // truncated
            Self.event(0x000A, Array(Self.longTermKeyParameters.prefix(30))),  // header agrees, layout short
            Self.event(0x000A, index: 1, Self.longTermKeyParameters),  // another adapter's
            Self.event(0x000F, Self.address + [0x01, 0, 0, 0, 0]),  // not a key
            [0xFF],
            good,
        ] {
            #expect(send(sender, datagram, datagram.count, 0) == datagram.count)
        }
        let delivered = keys.wait(for: 1)
        #expect(delivered.count == 1 && delivered.first?.index == 0)
        #expect(monitor.malformed == 3 && monitor.delivered == 1)
    }
}
