import Glibc
import Testing
@testable import HCITransport

@Suite struct TransportErrorTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var errno: Int32
        var operation: TransportOperation
        var spec: TransportSpec?
        var context = ErrorContext(adapters: [0, 1], executable: "/usr/local/bin/bareble-central")
        var text: String
        var testDescription: String { "\(spec?.description ?? "nil") \(operation) errno \(errno)" }
    }

    static let cases: [Case] = [
        Case(errno: EAFNOSUPPORT, operation: .socket, spec: .hciUser(index: 0),
             text: "hci:0: this kernel has no Bluetooth support (no AF_BLUETOOTH): use tcp:/serial: or the virtual radio"),
        Case(errno: EAFNOSUPPORT, operation: .socket, spec: .hciMonitor,
             text: "hci-monitor: this kernel has no Bluetooth support (no AF_BLUETOOTH): use tcp:/serial: or the virtual radio"),
        Case(errno: EAFNOSUPPORT, operation: .socket, spec: nil,
             text: "adapters: this kernel has no Bluetooth support (no AF_BLUETOOTH): use tcp:/serial: or the virtual radio"),
        Case(errno: EBUSY, operation: .bind, spec: .hciUser(index: 0),
             text: "hci0 is held by another program, probably bluetoothd: stop it (systemctl stop bluetooth) or use hci-raw:0"),
        Case(errno: EPERM, operation: .bind, spec: .hciUser(index: 1),
             text: "hci:1: bind needs CAP_NET_ADMIN: run as root or grant it with `sudo setcap cap_net_admin,cap_net_raw+ep /usr/local/bin/bareble-central`"),
        Case(errno: EACCES, operation: .deviceUp, spec: .hciRaw(index: 0),
             text: "hci-raw:0: HCIDEVUP needs CAP_NET_ADMIN: run as root or grant it with `sudo setcap cap_net_admin,cap_net_raw+ep /usr/local/bin/bareble-central`"),
        Case(errno: EPERM, operation: .write, spec: .hciRaw(index: 0),
             text: "hci-raw:0: write needs CAP_NET_RAW: run as root or grant it with `sudo setcap cap_net_admin,cap_net_raw+ep /usr/local/bin/bareble-central`"),
        Case(errno: EPERM, operation: .bind, spec: .hciMonitor,
             text: "hci-monitor: bind needs CAP_NET_RAW: run as root or grant it with `sudo setcap cap_net_admin,cap_net_raw+ep /usr/local/bin/bareble-central`"),
        Case(errno: ENODEV, operation: .bind, spec: .hciUser(index: 3),
             text: "no adapter hci3; adapters present: hci0, hci1"),
        Case(errno: ENODEV, operation: .bind, spec: .hciRaw(index: 2), context: ErrorContext(),
             text: "no adapter hci2; adapters present: none"),
        Case(errno: ECONNREFUSED, operation: .connect, spec: .tcp(host: "localhost", port: 4000),
             text: "tcp:localhost:4000: connection refused: is the controller (or the virtual radio) listening on port 4000?"),
        Case(errno: ECONNRESET, operation: .write, spec: .tcp(host: "localhost", port: 4000),
             text: "tcp:localhost:4000: the controller closed the connection"),
        Case(errno: EPIPE, operation: .write, spec: .serial(path: "/dev/ttyS0", baud: 115_200, flowControl: false),
             text: "serial:/dev/ttyS0: the controller closed the connection"),
        Case(errno: ENOENT, operation: .open, spec: .serial(path: "/dev/ttyUSB0", baud: 115_200, flowControl: false),
             text: "serial:/dev/ttyUSB0: /dev/ttyUSB0 does not exist: check the adapter is plugged in (ls /dev/ttyUSB* /dev/ttyACM*)"),
        Case(errno: EACCES, operation: .open, spec: .serial(path: "/dev/ttyACM0", baud: 115_200, flowControl: false),
             text: "serial:/dev/ttyACM0: permission denied: add yourself to the dialout group (sudo usermod -aG dialout $USER), then log in again"),
        Case(errno: ETIMEDOUT, operation: .connect, spec: .tcp(host: "10.0.0.1", port: 9),
             text: "tcp:10.0.0.1:9: timed out after 0 s waiting for the TCP connection"),
        Case(errno: EINVAL, operation: .configure, spec: .serial(path: "/dev/ttyS1", baud: 9600, flowControl: false),
             text: "serial:/dev/ttyS1,9600: configure failed: Invalid argument (errno 22)"),
    ]

    @Test(arguments: cases)
    func mapping(_ entry: Case) {
        let error = TransportError.from(errno: entry.errno, operation: entry.operation, spec: entry.spec, context: entry.context)
        #expect(error.description == entry.text)
    }

    @Test func otherMessagesSayWhatToDo() {
        #expect(TransportError.timedOut(spec: "tcp:h:1", waitingFor: "the TCP connection", after: .seconds(5)).description
            == "tcp:h:1: timed out after 5 s waiting for the TCP connection")
        #expect(TransportError.timedOut(spec: "virtual", waitingFor: "x", after: .milliseconds(1500)).description
            == "virtual: timed out after 1500 ms waiting for x")
        #expect(TransportError.radioNeedsBumble(python: "python3").description.contains("README.md"))
        #expect(TransportError.radioScriptNotFound(searched: ["/a"]).description.contains("BAREBLE_RADIO_SCRIPT"))
    }

    /// This machine's kernel has no AF_BLUETOOTH: every kernel-socket path says so.
    @Test func hciSocketsOnThisKernel() throws {
        guard socket(AF_BLUETOOTH, Int32(SOCK_RAW.rawValue), 1) < 0 && errno == EAFNOSUPPORT else {
            Issue.record("this kernel has AF_BLUETOOTH; the kernel lane covers these paths")
            return
        }
        let expected = "hci:0: this kernel has no Bluetooth support (no AF_BLUETOOTH): use tcp:/serial: or the virtual radio"
        #expect(throws: TransportError.noBluetoothInKernel(spec: "hci:0")) { try TransportSpec.hciUser(index: 0).open() }
        #expect(TransportError.noBluetoothInKernel(spec: "hci:0").description == expected)
        #expect(throws: TransportError.noBluetoothInKernel(spec: "hci-raw:0")) { try TransportSpec.hciRaw(index: 0).open() }
        #expect(throws: TransportError.noBluetoothInKernel(spec: "hci-monitor")) { try HCIMonitor.open() }
        #expect(throws: TransportError.noBluetoothInKernel(spec: "adapters")) { try Adapters.list() }
        #expect(throws: TransportError.noBluetoothInKernel(spec: "hci-raw:0")) { try Adapters.bringUp(index: 0) }
        let choice = try TransportSpec.defaultChoice(environment: nil, adapters: .failure(.noBluetoothInKernel(spec: "adapters")))
        #expect(choice.spec == .virtual)
        #expect(choice.reason == "no Bluetooth adapter here (kernel has no AF_BLUETOOTH): using the virtual radio with its demo peers")
    }
}
