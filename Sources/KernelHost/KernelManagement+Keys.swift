import BluetoothCore
import Glibc
import HCITransport

extension KernelManagement {
    enum KeyOpcode {
        static let loadLongTermKeys: UInt16 = 0x0013
        static let loadIdentityResolvingKeys: UInt16 = 0x0030
        static let loadConnectionParameters: UInt16 = 0x0035
    }

    /// Hands the kernel the keys user space keeps, replacing every key of that kind it
    /// holds for hci`index` (Load Long Term Keys, Load Identity Resolving Keys, Load
    /// Connection Parameters; the kernel empties its list before loading): what a daemon
    /// does when it starts. Debug keys are left out (the kernel skips them), and so are
    /// random peers that are not static (the kernel refuses the whole command for one).
    public static func loadKeys(
        index: Int, longTermKeys: [KernelKeys.LongTermKey], identityResolvingKeys: [KernelKeys.IdentityResolvingKey],
        connectionParameters: [KernelKeys.ConnectionParameters], timeout: Duration = .seconds(5)
    ) throws(TransportError) {
        let keys = longTermKeys.filter { $0.type != .debugP256 && isIdentity($0.peer) }
        _ = try request(KeyOpcode.loadLongTermKeys, index: index, parameters: list(keys) { $0.write(to: &$1) }, timeout: timeout)
        let irks = identityResolvingKeys.filter { isIdentity($0.peer) }
        _ = try request(KeyOpcode.loadIdentityResolvingKeys, index: index, parameters: list(irks) { $0.write(to: &$1) }, timeout: timeout)
        let parameters = connectionParameters.filter { isIdentity($0.peer) }
        _ = try request(KeyOpcode.loadConnectionParameters, index: index, parameters: list(parameters) { $0.write(to: &$1) }, timeout: timeout)
    }

    /// A public address, or a random one whose two top bits say static: the identities the
    /// kernel takes keys for.
    static func isIdentity(_ peer: DeviceAddress) -> Bool {
        !peer.type.isRandom || (peer.address.littleEndianBytes.last ?? 0) & 0xC0 == 0xC0
    }

    /// Count (2) and records: the command parameters of every Load command. The count
    /// field is 16 bits; more records than fit would be refused by the kernel anyway
    /// (its own limit is the 16-bit parameter length), so the list is cut there.
    static func list<Record>(_ records: [Record], _ write: (Record, inout ByteWriter) -> Void) -> [UInt8] {
        let kept = records.prefix(Int(UInt16.max) / 64)
        var writer = ByteWriter()
        writer.write(UInt16(kept.count))
        for record in kept { write(record, &writer) }
        return writer.bytes
    }

    /// Powers hci`index` off through the management interface, as bluetoothd does: the
    /// kernel disconnects every link first (HCIDEVDOWN would cut them), then closes the
    /// device. Nothing to do when it is off already.
    public static func powerOff(index: Int, timeout: Duration = .seconds(10)) throws(TransportError) {
        let (_, current) = try information(index: index, timeout: timeout)
        guard current.contains(.powered) else { return }
        _ = try request(Opcode.setPowered, index: index, parameters: [0], timeout: timeout)
    }
}
