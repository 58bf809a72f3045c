import ATT
import BluetoothCore
import Dispatch
import GATT

/// A `GATTServerStore` driven by what clients on four bearers can make the ATT server call:
/// any PDU through `admit`, reads and writes of any handle with any value (up to 255
/// octets here), bearers closing, plus the application adding and removing services and a
/// bond's state going out and back in, and requests of a bearer's previous instance still
/// running after it closed. Invariants: the served hash equals the one computed from the
/// database after every change to it and at the end; a bearer's Client Supported Features
/// only gain bits while it lives; a CCCD reads back as two octets with no reserved bit; a
/// closed bearer's late request leaves the next bearer's state as it was. At most
/// `maximumAdds` services
/// are added per input: each addition rehashes the whole database, so an input of a
/// thousand additions cost quadratic time (a third of the target's samples) while reaching
/// nothing a handful does not (the handle space would need 21,000 of them to run out).
enum GATTServerStoreTarget {
    static let maximumAdds = 8

    static func makeStore() -> GATTServerStore? {
        try? GATTServerStore(services: [
            GATTDatabase.Service(uuid: BluetoothUUID(UInt16(0xFFF0)), characteristics: [
                GATTDatabase.Characteristic(uuid: BluetoothUUID(UInt16(0xFFF1)), properties: [.read, .write, .writeWithoutResponse], value: [1]),
                GATTDatabase.Characteristic(uuid: BluetoothUUID(UInt16(0xFFF2)), properties: [.read, .notify], value: [0]),
            ]),
        ])
    }

    static let battery = GATTDatabase.Service(uuid: GATTUUID.battery, characteristics: [
        GATTDatabase.Characteristic(uuid: GATTUUID.batteryLevel, properties: [.read, .indicate], value: [50]),
    ])

    @Sendable static func store(_ bytes: [UInt8]) {
        guard let store = makeStore() else { return expect(false, "the sample database lays out") }
        let finished = DispatchSemaphore(value: 0)
        Task {
            await run(store, FuzzPieces(bytes))
            finished.signal()
        }
        finished.wait()
    }

    static func run(_ store: GATTServerStore, _ pieces: FuzzPieces) async {
        var features: [UInt16: UInt8] = [:]
        /// The instance of each bearer number's current bearer.
        var instances: [UInt64] = [1, 1, 1, 1]
        var adds = 0
        var pieces = pieces
        while let piece = pieces.next() {
            guard piece.count >= 2 else { continue }
            let bearer = UInt16(piece[1] & 0x03)
            // Bit 2: a request of the bearer before this one on the number, after its close.
            let late = piece[1] & 0x04 != 0 && instances[Int(bearer)] > 1
            let context = ATTServerContext(bearer: bearer, instance: instances[Int(bearer)] - (late ? 1 : 0))
            let before = late ? store.bondedState(bearer: bearer) : nil
            let rest = Array(piece.dropFirst(2))
            switch piece[0] % 7 {
            case 0:
                if let pdu = try? ATTPDU(decoding: rest) { _ = store.admit(pdu, context: context) }
            case 1, 2:
                guard rest.count >= 2 else { continue }
                let handle = UInt16(rest[0]) | UInt16(rest[1]) << 8
                guard let attribute = store.attribute(at: handle) else { continue }
                if piece[0] % 7 == 1 {
                    _ = await store.write(attribute, value: Array(rest.dropFirst(2)), kind: .request, context: context)
                } else if case .success(let value) = await store.read(attribute, context: context),
                          attribute.type == GATTUUID.clientCharacteristicConfiguration {
                    expect(value.count == 2 && value[0] & 0xFC == 0 && value[1] == 0, "CCCD read as \(Hex.string(value))")
                }
            case 3:
                store.bearerClosed(context)
                if !late {
                    instances[Int(bearer)] += 1
                    features[bearer] = nil
                }
            case 4:
                guard adds < maximumAdds else { continue }
                adds += 1
                _ = try? store.addServices([battery])
                expectServedHash(store)
            case 5:
                _ = try? store.removeService(at: rest.first.map { UInt16($0) } ?? 0)
                expectServedHash(store)
            default:
                store.restoreBondedState(store.bondedState(bearer: bearer), context: context)
            }
            if let before, piece[0] % 7 != 4, piece[0] % 7 != 5 {
                expect(store.bondedState(bearer: bearer) == before, "a closed bearer's late request changed bearer \(bearer)'s next client")
            }
            for bearer: UInt16 in 0...3 {
                guard let attribute = store.attribute(at: 0x000B), case .success(let value) = await store.read(attribute, context: ATTServerContext(bearer: bearer, instance: instances[Int(bearer)])) else {
                    return expect(false, "Client Supported Features readable at 0x000B")
                }
                let now = value.first ?? 0
                expect(now & (features[bearer] ?? 0) == features[bearer] ?? 0, "bearer \(bearer) lost a feature bit: \(now)")
                features[bearer] = now
            }
        }
        expectServedHash(store)
    }

    /// Computing the hash (an AES-CMAC over the database) after every piece was a fifth of
    /// the target's time: it is checked after each change to the database and at the end.
    static func expectServedHash(_ store: GATTServerStore) {
        expect(store.databaseHash == store.database.computedHash, "the served hash is the database's")
    }
}
