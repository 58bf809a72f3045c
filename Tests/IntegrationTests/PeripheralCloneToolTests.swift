import Foundation
import Testing
import TestSupport

/// The clone round trip: `bareble-central explore --json` of the radio's big peripheral,
/// served by `bareble-peripheral serve --database`, explored again by `bareble-central` on
/// another exposed controller of the same radio.
extension PeripheralToolVirtualRadio {
    static let bigPeripheral = "C4:4B:4D:00:00:04/random"

    /// Every handle in `json` moved down by `offset` (the keys explore prints handles under).
    static func shifted(_ json: Any, by offset: Int) -> Any {
        if let object = json as? [String: Any] {
            return Dictionary(uniqueKeysWithValues: object.map { key, value in
                if ["handle", "end", "valueHandle", "start"].contains(key), let handle = value as? Int { return (key, handle - offset as Any) }
                return (key, shifted(value, by: offset))
            })
        }
        if let array = json as? [Any] { return array.map { shifted($0, by: offset) } }
        return json
    }

    /// JSON text with sorted keys: equal text, equal JSON.
    static func canonical(_ json: Any) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: json, options: [.sortedKeys]), as: UTF8.self)
    }

    static func explore(_ address: String) async throws -> [String: Any] {
        let harness = try harness.get()
        let result = try await RadioPeripheral.central(["explore", address, "--json", "--no-auto-pair"] + RadioPeripheral.transport(harness))
        #expect(result.status == 0, "\(result.errors)")
        return try #require(try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any])
    }

    @Test("clone: the big peripheral explored, served from the file, explored again: equal but for the address, our GATT service's Server Supported Features and what follows from it")
    func cloneRoundTrip() async throws {
        let original = try await Self.explore(Self.bigPeripheral)
        let file = RadioPeripheral.temporaryPath("clone.json")
        try JSONSerialization.data(withJSONObject: original).write(to: URL(fileURLWithPath: file))
        let tool = try Self.serve(["--database", file])
        defer { tool.stop() }
        let address = try await Self.advertisingAddress(tool)
        let clone = try await Self.explore(address + "/public")

        #expect(clone["address"] as? String == address && clone["addressType"] as? String == "public")
        #expect(clone["name"] as? String == original["name"] as? String)
        #expect(clone["mtu"] as? Int == original["mtu"] as? Int)
        let theirs = try #require(original["services"] as? [[String: Any]])
        let ours = try #require(clone["services"] as? [[String: Any]])
        #expect(theirs.count == 34 && ours.count == theirs.count)
        // GAP: the file's Device Name and Appearance became ours; the same handles.
        #expect(try Self.canonical(ours[0]) == Self.canonical(theirs[0]))
        // GATT: ours adds Server Supported Features (0x2B3A, 2 handles) after the three
        // Bumble has; the Database Hash is of another database, so another value.
        let theirGATT = try #require(theirs[1]["characteristics"] as? [[String: Any]])
        let ourGATT = try #require(ours[1]["characteristics"] as? [[String: Any]])
        #expect(theirGATT.map { $0["uuid"] as? String } == ["2A05", "2B29", "2B2A"])
        #expect(ourGATT.map { $0["uuid"] as? String } == ["2A05", "2B29", "2B2A", "2B3A"])
        for (mine, its) in zip(ourGATT.prefix(2), theirGATT.prefix(2)) { #expect(try Self.canonical(mine) == Self.canonical(its)) }
        #expect(ourGATT[2]["value"] as? String != theirGATT[2]["value"] as? String)
        #expect(clone["databaseHash"] as? String == ourGATT[2]["value"] as? String)
        let offset = try #require(ours[1]["end"] as? Int) - (try #require(theirs[1]["end"] as? Int))
        #expect(offset == 2)
        // Everything after: the same services, characteristics, properties, descriptors and
        // values, every handle 2 higher.
        var compared = 0
        for (mine, its) in zip(ours.dropFirst(2), theirs.dropFirst(2)) {
            #expect(try Self.canonical(Self.shifted(mine, by: offset)) == Self.canonical(its), "\(its["uuid"] ?? "?")")
            compared += (its["characteristics"] as? [Any])?.count ?? 0
        }
        #expect(compared > 200)
        let exit = try await tool.interrupt()
        #expect(exit.status == 0, "\(exit.errors)")
    }
}
