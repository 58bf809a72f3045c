import BluetoothCore
import HCI
import HCITransport
import Testing
import TestSupport

/// serial: over a pty that the virtual radio exposes, like a UART to a real chip.
@Suite(.serialized) struct VirtualRadioSerial {
    static let harness = Result { try RadioHarness(arguments: ["--pty", "--peripheral"]) }

    @Test func bringsUpOverAPtyAndResynchronisesAfterGarbage() async throws {
        let harness = try Self.harness.get()
        let pty = try #require(harness.radio.ptyPath)
        let transport = try SerialTransport.open(path: pty)
        let controller = HCIController(transport: transport)
        try controller.start()
        let info = try await controller.powerOn()
        #expect(info.address == BluetoothAddress("F0:0D:00:00:01:01"))

        // Garbage between packets: a lone byte that is no packet indicator, then a byte
        // that looks like an event indicator followed by an impossible event code.
        for garbage in ["ff", "04 00", "02"] {
            try await harness.control("garbage \(garbage.replacingOccurrences(of: " ", with: "")) pty")
            for _ in 0..<3 {
                #expect(try await controller.send(ReadBDADDR()).address == info.address)
            }
        }
        let statistics = transport.statistics
        #expect(statistics.skippedBytes + statistics.droppedFrames > 0)
        #expect(controller.statistics.malformedEvents == 0)
        // A whole bring-up still works on the same stream.
        #expect(try await controller.powerOn().address == info.address)
        controller.close()
    }
}
