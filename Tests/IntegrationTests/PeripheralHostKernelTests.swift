import BareBLE
import BluetoothCore
import Bonding
import HCI
import HCITransport
import KernelHost
import Testing
import TestSupport

/// The peripheral role on a Central beside the kernel (`hci-raw:N`), where this machine
/// can check it: what the host refuses before it opens a kernel socket, and the typed error
/// when the kernel has no Bluetooth. Serving through the kernel is proven in the kernel
/// lane (`rawPeripheralServesThroughKernel`).
@Suite struct PeripheralHostKernel {
    /// A scripted controller that says it is hci`index` shared with the kernel.
    final class KernelSharedTransport: HCITransport {
        let base = ScriptedTransport()
        let index: Int
        init(index: Int) { self.index = index }
        var name: String { "hci-raw:\(index) (scripted)" }
        var kernelAdapter: Int? { index }
        func start(receive: @escaping @Sendable (HCIPacket) -> Void, closed: @escaping @Sendable (TransportError?) -> Void) throws(TransportError) {
            try base.start(receive: receive, closed: closed)
        }
        func send(_ packet: HCIPacket) throws(TransportError) { try base.send(packet) }
        func close() { base.close() }
    }

    static func central(index: Int = 7, security: SecurityPolicy = SecurityPolicy()) -> Central {
        Central(controller: HCIController(transport: KernelSharedTransport(index: index)), cache: GATTCache(directory: nil), security: security)
    }

    static let options = PeripheralHost.Options(data: AdvertisingData([0x02, 0x01, 0x06]))

    @Test("privacy on hci-raw is refused up front: the kernel's SMP pairs against the adapter's own address")
    func privacyIsRefused() throws {
        let bonds = try BondStore(directory: PeripheralHostPairing.bondDirectory(), identity: .public(BluetoothAddress(0xF00D_0000_0001)))
        let central = Self.central(security: SecurityPolicy(bonds: bonds, privacy: true))
        #expect {
            _ = try PeripheralHost(central: central, options: Self.options)
        } throws: { error in
            guard case let .invalidOptions(why) = error as? PeripheralHostError else { return false }
            return why.contains("privacy on hci-raw:7") && why.contains("hci:7")
        }
    }

    @Test("the host asks the kernel for its ATT listener: without one (no such adapter, or no Bluetooth in the kernel) a typed error says why")
    func noListenerIsATypedError() throws {
        #expect {
            _ = try PeripheralHost(central: Self.central(), options: Self.options)
        } throws: { error in
            guard case let .kernel(socketError) = error as? PeripheralHostError else { return false }
            switch socketError {
            case .noBluetoothInKernel, .adapter: return "\(error)".hasPrefix("cannot accept centrals through the kernel")
            default: return false
            }
        }
    }
}
