import Foundation
import Testing
import TestSupport

/// `bareble-beacon advertise`, heard by the virtual radio's Bumble scanner.
@Suite(.serialized) struct BeaconAdvertiseTool {
    static let harness = Result { try RadioHarness(arguments: ["--tcp", "--scanner"]) }

    @Test func anIBeaconIsHeardByteExactAndNonConnectable() async throws {
        let harness = try Self.harness.get()
        let tool = try ToolProcess([
            "advertise", "ibeacon", "--uuid", "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "--major", "7", "--minor", "513",
            "--power", "-59", "--interval", "50", "--duration", "10", "--transport", "tcp:127.0.0.1:\(harness.radio.tcpPort)",
        ])
        // flags 06; manufacturer data, Apple, type 02 length 15, UUID, major 7, minor 0x0201, -59 (0xC5).
        let expected = "0201061aff4c000215e2c56db5dffb48d2b060d0f5a71096e000070201c5"
        let announced = try await tool.next("the advertising line") { _ in true }
        #expect(announced.text.lowercased().contains(expected), "\(announced.text)")
        let heard = try await harness.event("heard") { ($0["address"] as? String)?.hasPrefix("F0:0D:") == true }
        #expect(heard["data"] as? String == expected, "\(heard)")
        #expect(heard["connectable"] as? Bool == false)
        #expect(heard["scannable"] as? Bool == false)
        #expect(heard["legacy"] as? Bool == true)
        #expect(heard["scan_response"] is NSNull)
        let end = try await tool.interrupt()
        #expect(end.status == 0, "\(end.errors)")
    }

    @Test func builderErrorsArePrintedAsTheySayWhatToDo() async throws {
        let tool = try ToolProcess(["advertise", "eddystone-url", "--url", "https://example.com/a/very/long/path", "--transport", "tcp:127.0.0.1:1"])
        let end = try await tool.finish()
        #expect(end.status != 0)
        #expect(end.errors.contains("too many"), "\(end.errors)")
    }
}
