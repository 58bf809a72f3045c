import Bonding
import BluetoothCore
import HCITransport
import Trace

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

    /// A capture of any format fed in two pieces (the first byte picks where it splits),
    /// every record decoded at every layer and summed up as `stats` and `gatt` do: the
    /// reader, the decoder and both summaries stay total.
    @Sendable static func trace(_ bytes: [UInt8]) {
        guard let first = bytes.first else { return }
        let split = min(bytes.count, 1 + Int(first) * bytes.count / 256)
        var parser = CaptureParser()
        var decoder = TraceDecoder(showKeys: true, withFields: first & 1 == 1)
        var statistics = TraceStatistics()
        var database = TraceGATTDatabase()
        // Identities the capture exchanges for its own first address.
        var address = AddressFilter(address: BluetoothAddress(UInt64(first) << 40 | 0x4B_4D00_0007))
        var payload = 0
        for piece in [bytes[1..<split], bytes[split...]] {
            do {
                try parser.feed(piece) { record in
                    payload += record.payload.count
                    let packet = decoder.decode(record)
                    statistics.add(packet)
                    database.add(packet)
                    _ = address.matches(packet)
                }
            } catch { break }
        }
        _ = try? database.result()
        for connection in statistics.connections { _ = (connection.transactions.percentile(0.99), connection.duration) }
        for advertiser in statistics.advertisers { _ = advertiser.meanInterval }
        expect(address.keys.count <= AddressFilter.maximumKeys, "\(address.keys.count) IRKs kept")
        expect(payload <= bytes.count, "\(payload) payload bytes from a \(bytes.count)-byte capture")
    }
}
