import Foundation
import TestSupport

/// What the GATT suites share about the virtual radio's HRM peripheral
/// (tools/virtual-radio/README.md, "GATT database of the peripheral").
enum RadioPeripheral {
    static let address = "C4:4B:4D:00:00:01"
    static func uuid(_ short: String) -> String { "B4AE\(short)-7E57-4BA2-B1E0-00000000C0DE" }
    static let longValue = uuid("0002")
    static let readWrite = uuid("0003")
    static let writeWithoutResponse = uuid("0004")
    static let notify = uuid("0005")
    static let indicate = uuid("0006")
    static let encrypted = uuid("0007")

    /// tshark 4.0.17 reports a correct Read By Type Response whose entries are includes of
    /// 128-bit services (4-byte values: handle, end, no UUID, Core 5.4 Vol 3 Part G 3.2) as
    /// malformed, because its dissector always expects a UUID after the two handles. Such
    /// a response has Length 6 (handle + 4); this excludes exactly those packets.
    static let tsharkIncludeFalsePositive = "btatt.opcode == 0x09 && btatt.length == 6"

    /// `bareble-central` with `arguments`, to its exit, off the cooperative pool.
    static func central(_ arguments: [String]) async throws -> CentralTool.Run {
        try await onOwnThread { try CentralTool.runBlocking(arguments, environment: [:]) }
    }

    static func transport(_ harness: RadioHarness) -> [String] {
        ["--transport", "tcp:127.0.0.1:\(harness.radio.tcpPort)"]
    }

    static func temporaryPath(_ name: String) -> String {
        TestScratch.path(name)
    }
}
