import Foundation
import Testing
import TestSupport

extension PeripheralToolVirtualRadio {
    /// Seen in the ANCS soak and here: the tool's RSS grew ~11 kB per reconnect and never
    /// came back. The manager's hooks (a closure kept bare in a `Lock`) were re-wrapped in two
    /// thunks by every request, and each reconnect brings a central's ~100 discovery
    /// requests. Measured on the tool's own process: the test process keeps the radio's
    /// whole event log. `BAREBLE_PERIPHERAL_RECONNECT_CYCLES` sets the cycles (120 by default).
    @Test("serve: a central that connects, discovers, subscribes and leaves 120 times grows the tool's RSS by under 5 kB a cycle after the first 20")
    func reconnectsKeepMemoryFlat() async throws {
        let cycles = max(40, ProcessInfo.processInfo.environment["BAREBLE_PERIPHERAL_RECONNECT_CYCLES"].flatMap(Int.init) ?? 120)
        let warmUp = 20
        let tool = try Self.serve(["--profile", "battery", "--name", "BareBLE-Cycles"])
        defer { tool.stop() }
        let address = try await Self.advertisingAddress(tool)
        let log = try Self.log.get()
        let name = try #require(try await log.control("add-central")["peer"] as? String)
        var resident: [Int: Int] = [:]
        for cycle in 1...cycles {
            try await log.control("central \(name) connect \(address)", timeout: .seconds(20))
            _ = try await tool.next("connected \(cycle)") { $0["event"] as? String == "connected" }
            try await log.control("central \(name) discover", timeout: .seconds(30))
            try await log.control("central \(name) subscribe 2A19")
            _ = try await tool.next("subscribed \(cycle)") { $0["event"] as? String == "subscribed" }
            try await log.control("central \(name) disconnect")
            _ = try await tool.next("disconnected \(cycle)") { $0["event"] as? String == "disconnected" }
            if [warmUp, 200, cycles].contains(cycle) { resident[cycle] = tool.residentKilobytes }
        }
        let start = try #require(resident[warmUp]), end = try #require(resident[cycles])
        let perCycle = Double(end - start) / Double(cycles - warmUp)
        print("bareble-peripheral serve: RSS \(resident.sorted { $0.key < $1.key }.map { "\($0.value) kB after \($0.key)" }.joined(separator: ", ")) cycles; \(String(format: "%.1f", perCycle)) kB a cycle after \(warmUp)")
        #expect(start > 0 && perCycle < 5, "RSS grew from \(start) kB to \(end) kB over \(cycles - warmUp) reconnects")
    }
}
