import BluetoothCore
import Testing
@testable import HCITransport

@Suite struct TransportSpecTests {
    @Test(arguments: [
        ("hci:0", TransportSpec.hciUser(index: 0), "hci:0"),
        ("hci:12", .hciUser(index: 12), "hci:12"),
        ("hci-raw:1", .hciRaw(index: 1), "hci-raw:1"),
        ("hci-monitor", .hciMonitor, "hci-monitor"),
        ("tcp:127.0.0.1:4000", .tcp(host: "127.0.0.1", port: 4000), "tcp:127.0.0.1:4000"),
        ("tcp:radio.local:1", .tcp(host: "radio.local", port: 1), "tcp:radio.local:1"),
        ("tcp:[::1]:9000", .tcp(host: "::1", port: 9000), "tcp:[::1]:9000"),
        ("serial:/dev/ttyUSB0", .serial(path: "/dev/ttyUSB0", baud: 115_200, flowControl: false), "serial:/dev/ttyUSB0"),
        ("serial:/dev/ttyUSB0,1000000", .serial(path: "/dev/ttyUSB0", baud: 1_000_000, flowControl: false), "serial:/dev/ttyUSB0,1000000"),
        ("serial:/dev/ttyACM0,rtscts", .serial(path: "/dev/ttyACM0", baud: 115_200, flowControl: true), "serial:/dev/ttyACM0,rtscts"),
        ("serial:/dev/pts/3,921600,rtscts", .serial(path: "/dev/pts/3", baud: 921_600, flowControl: true), "serial:/dev/pts/3,921600,rtscts"),
        ("virtual", .virtual, "virtual"),
    ])
    func valid(_ text: String, _ spec: TransportSpec, _ description: String) throws {
        #expect(try TransportSpec(parsing: text) == spec)
        #expect(spec.description == description)
        #expect(try TransportSpec(parsing: spec.description) == spec)
    }

    @Test(arguments: [
        "", "hci", "hci:", "hci:x", "hci:-1", "hci:65535", "hci-raw:", "tcp:", "tcp:host", "tcp::4000", "tcp:h:0",
        "tcp:h:65536", "tcp:h:port", "serial:", "serial:ttyUSB0", "serial:/dev/ttyUSB0,12345", "serial:/dev/x,115200,115200",
        "serial:/dev/x,rts", "bluetooth:0", "virtual:1", "usb:0",
    ])
    func invalid(_ text: String) {
        #expect {
            try TransportSpec(parsing: text)
        } throws: { error in
            guard case let .invalidSpec(echo, _) = error as? TransportError else { return false }
            return echo == text && (error as? TransportError)?.description.contains("use one of hci:N") == true
        }
    }

    @Test func defaultChoice() throws {
        let up = AdapterInfo(index: 1, name: "hci1", address: .zero, isUp: true, bus: .usb)
        let down = AdapterInfo(index: 0, name: "hci0", address: .zero, isUp: false, bus: .uart)
        #expect(try TransportSpec.defaultChoice(environment: "tcp:h:1", adapters: .success([up])).spec == .tcp(host: "h", port: 1))
        #expect(try TransportSpec.defaultChoice(environment: "", adapters: .success([up])).spec == .hciRaw(index: 1))
        #expect(try TransportSpec.defaultChoice(environment: nil, adapters: .success([down, up])).spec == .hciUser(index: 0))
        let none = try TransportSpec.defaultChoice(environment: nil, adapters: .success([]))
        #expect(none.spec == .virtual)
        #expect(none.reason == "no Bluetooth adapter here: using the virtual radio with its demo peers")
        #expect(throws: TransportError.self) { try TransportSpec.defaultChoice(environment: "bogus", adapters: .success([])) }
    }

    @Test func monitorIsNotATransport() {
        #expect(throws: TransportError.self) { try TransportSpec.hciMonitor.open() }
    }
}
