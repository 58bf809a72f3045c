import Foundation
import Testing
import TestSupport

/// The clone round trip: `bareble-central explore --json` of the radio's big peripheral,
/// served by `bareble-peripheral serve --database`, explored again by `bareble-central` on
/// another exposed controller of the same radio.
extension PeripheralToolVirtualRadio {
    static let bigPeripheral = "C4:4B:4D:00:00:04/random"

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

    @Test("clone: the big peripheral explored, served from the file, explored again: equal but for the address")
    func cloneRoundTrip() async throws {
        let original = try await Self.explore(Self.bigPeripheral)
        let file = RadioPeripheral.temporaryPath("clone.json")
        try JSONSerialization.data(withJSONObject: original).write(to: URL(fileURLWithPath: file))
        let tool = try Self.serve(["--database", file])
        defer { tool.stop() }
        let address = try await Self.advertisingAddress(tool)
        let clone = try await Self.explore(address + "/public")

        #expect(clone["address"] as? String == address && clone["addressType"] as? String == "public")
        let theirs = try #require(original["services"] as? [[String: Any]])
        #expect(theirs.count == 34)
        #expect(((theirs.compactMap { $0["characteristics"] as? [Any] }).map(\.count).reduce(0, +)) > 200)
        // Everything else, field by field: name, MTU, Database Hash, every service,
        // characteristic, property, descriptor, handle and value.
        var ours = clone, its = original
        for key in ["address", "addressType"] { ours[key] = nil; its[key] = nil }
        #expect(try Self.canonical(ours) == Self.canonical(its))
        #expect(clone["databaseHash"] as? String != nil)
        let exit = try await tool.interrupt()
        #expect(exit.status == 0, "\(exit.errors)")
    }

    /// The same clone from a capture instead of the explore's output: `bareble-trace gatt`
    /// on the explore's btsnoop, served, explored again: equal to the original explore but
    /// for the address.
    @Test("clone from a trace: the big peripheral's database rebuilt from a capture of its explore, served, explored again")
    func cloneFromATrace() async throws {
        let harness = try Self.harness.get()
        let capture = RadioPeripheral.temporaryPath("clone-trace.btsnoop")
        let explored = try await RadioPeripheral.central(["explore", Self.bigPeripheral, "--json", "--no-auto-pair", "--btsnoop", capture] + RadioPeripheral.transport(harness))
        #expect(explored.status == 0, "\(explored.errors)")
        let original = try #require(try JSONSerialization.jsonObject(with: Data(explored.output.utf8)) as? [String: Any])
        let rebuilt = try await TraceTool.run(TraceTool.executable, ["gatt", capture])
        #expect(rebuilt.status == 0, "\(rebuilt.errors)")
        let file = RadioPeripheral.temporaryPath("clone-trace.json")
        try Data(rebuilt.output.utf8).write(to: URL(fileURLWithPath: file))
        let tool = try Self.serve(["--database", file])
        defer { tool.stop() }
        let address = try await Self.advertisingAddress(tool)
        let clone = try await Self.explore(address + "/public")
        var ours = clone, its = original
        for key in ["address", "addressType"] { ours[key] = nil; its[key] = nil }
        #expect(try Self.canonical(ours) == Self.canonical(its))
        #expect((clone["services"] as? [Any])?.count == 34)
        let exit = try await tool.interrupt()
        #expect(exit.status == 0, "\(exit.errors)")
    }
}
