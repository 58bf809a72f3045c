import Bonding
import HCITransport

/// Files a user or another program may have written: bond files, btsnoop captures.
enum FileTargets {
    @Sendable static func bondFile(_ bytes: [UInt8]) {
        guard let stored = try? BondFileFormat.decode(bytes, path: "fuzz") else { return }
        let again = try? BondFileFormat.decode(BondFileFormat.encode(stored), path: "fuzz")
        expect(again == stored, "bond file round trip changed the bonds")
    }

    @Sendable static func btsnoop(_ bytes: [UInt8]) {
        guard let file = try? BTSnoopFile(parsing: bytes) else { return }
        let stored = file.records.reduce(0) { $0 + $1.data.count }
        expect(stored <= bytes.count, "\(stored) record bytes from a \(bytes.count)-byte file")
    }
}
