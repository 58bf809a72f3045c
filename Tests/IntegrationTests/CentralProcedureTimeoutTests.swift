import BareBLE
import BluetoothCore
import Testing

extension PeripheralToolVirtualRadio {
    static let big = DeviceAddress("C4:4B:4D:00:00:04/random")!

    /// `Central.connect(procedureTimeout:)` is each GATT procedure's deadline: one too
    /// short for the big peripheral's discovery ends it with the error that names it.
    @Test("connect's procedureTimeout bounds a discovery")
    func procedureTimeoutReachesTheGATTClient() async throws {
        let harness = try Self.harness.get()
        let central = try Central.open(.tcp(host: "127.0.0.1", port: harness.radio.tcpPort))
        defer { central.close() }
        try await central.powerOn()
        let peripheral = try await central.connect(to: Self.big, procedureTimeout: .milliseconds(50))
        #expect(peripheral.gatt.procedureTimeout == .milliseconds(50))
        do {
            try await peripheral.discoverServices()
            Issue.record("34 services discovered within 50 ms")
        } catch {
            #expect("\(error)".contains("did not finish within"), "\(error)")
        }
        try await peripheral.disconnect()
    }
}
