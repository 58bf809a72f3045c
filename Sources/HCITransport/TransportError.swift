import BluetoothCore
import Glibc

/// The step of opening or running a transport that failed, for error mapping.
public enum TransportOperation: String, Sendable, Hashable {
    case socket, bind, connect, resolve, open, configure, read, write
    case deviceUp = "HCIDEVUP"
    case deviceDown = "HCIDEVDOWN"
    case deviceList = "HCIGETDEVLIST"
    case deviceInfo = "HCIGETDEVINFO"
    case setFilter = "HCI_FILTER"
    case spawn
}

/// Facts about the machine an error message may need; gathered by ``current()``, passed in
/// explicitly so the mapping itself stays a pure, testable function.
public struct ErrorContext: Sendable, Hashable {
    /// Indices of the adapters present (hciN), for "no adapter hci3; adapters present: ...".
    public var adapters: [Int]
    /// This program's path, for the `setcap` line.
    public var executable: String

    public init(adapters: [Int] = [], executable: String = "PATH") {
        self.adapters = adapters
        self.executable = executable
    }

    /// The adapters present now (none when they cannot be listed) and /proc/self/exe.
    public static func current() -> ErrorContext {
        let adapters = (try? Adapters.list().map(\.index)) ?? []
        return ErrorContext(adapters: adapters, executable: executablePath() ?? "PATH")
    }

    static func executablePath() -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else { return nil }
        return String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// Why a transport could not open, read or write. Every case's description tells the user
/// what to do next.
public enum TransportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A transport spec string that does not parse; `reason` says which part is wrong.
    case invalidSpec(String, reason: String)
    /// `hci-monitor` was given where a controller must be driven: the monitor channel only
    /// hears what crosses every adapter.
    case monitorCannotDrive
    /// The kernel has no AF_BLUETOOTH.
    case noBluetoothInKernel(spec: String)
    /// The user channel is exclusive and someone else (bluetoothd) holds the adapter.
    case adapterBusy(index: Int)
    /// A capability is missing for `operation`.
    case permissionDenied(spec: String, operation: TransportOperation, capability: String, executable: String)
    /// hciN does not exist.
    case noSuchAdapter(index: Int, present: [Int])
    case connectionRefused(host: String, port: Int)
    case hostNotFound(host: String, detail: String)
    /// A serial device path that does not exist.
    case noSuchDevice(path: String)
    /// A serial device the user may not open.
    case deviceAccessDenied(path: String)
    /// A deadline passed while waiting for `waitingFor`.
    case timedOut(spec: String, waitingFor: String, after: Duration)
    /// The far end closed the stream while we were writing.
    case closedByPeer(spec: String)
    /// The transport was closed (or never started) when this was asked of it.
    case notOpen(spec: String)
    /// `start` was called a second time.
    case alreadyStarted(spec: String)
    /// Any other system call failure: which one, and the system's words for it.
    case system(spec: String, operation: TransportOperation, errno: Int32, message: String)
    /// The virtual radio's script could not be found.
    case radioScriptNotFound(searched: [String])
    /// The Python running the radio cannot import Bumble.
    case radioNeedsBumble(python: String)
    /// The radio exited or misbehaved before it was ready.
    case radioFailed(detail: String)
    /// The stream took nothing while more than ``DescriptorLoop/backlogLimit`` bytes of
    /// frames queued for it: `bytes` were waiting.
    // Last on purpose: placed before `radioFailed`, debug builds of VirtualRadioTests
    // crashed reading a garbled `radioFailed` string inside `#expect(throws:)` closures
    // (Swift 6.3.1; the same class of fault BondStoreTests notes for that macro).
    case outputBacklog(spec: String, bytes: Int)

    public var description: String {
        switch self {
        case let .invalidSpec(text, reason):
            return "invalid transport \"\(text)\": \(reason); use one of "
                + "hci:N, hci-raw:N, hci-monitor, tcp:HOST:PORT, serial:/dev/ttyX[,BAUD][,rtscts], virtual"
        case .monitorCannotDrive:
            return "hci-monitor is the kernel's monitor channel: it hears what crosses every adapter but "
                + "cannot send a command, so this tool cannot use it; to watch it, run bareble-trace live; "
                + "to drive a controller, use hci:N (user channel), hci-raw:N (beside the kernel), "
                + "tcp:HOST:PORT, serial:/dev/ttyX or virtual"
        case let .noBluetoothInKernel(spec):
            return "\(spec): this kernel has no Bluetooth support (no AF_BLUETOOTH): "
                + "use tcp:/serial: or the virtual radio"
        case let .adapterBusy(index):
            return "hci\(index) is held by another program, probably bluetoothd: "
                + "stop it (systemctl stop bluetooth) or use hci-raw:\(index)"
        case let .permissionDenied(spec, operation, capability, executable):
            return "\(spec): \(operation.rawValue) needs \(capability): run as root or grant it with "
                + "`sudo setcap cap_net_admin,cap_net_raw+ep \(executable)`"
        case let .noSuchAdapter(index, present):
            let list = present.isEmpty ? "none" : present.map { "hci\($0)" }.joined(separator: ", ")
            return "no adapter hci\(index); adapters present: \(list)"
        case let .connectionRefused(host, port):
            return "tcp:\(host):\(port): connection refused: "
                + "is the controller (or the virtual radio) listening on port \(port)?"
        case let .hostNotFound(host, detail):
            return "tcp: cannot resolve host \"\(host)\" (\(detail)): check the name or use an IP address"
        case let .noSuchDevice(path):
            return "serial:\(path): \(path) does not exist: "
                + "check the adapter is plugged in (ls /dev/ttyUSB* /dev/ttyACM*)"
        case let .deviceAccessDenied(path):
            return "serial:\(path): permission denied: add yourself to the dialout group "
                + "(sudo usermod -aG dialout $USER), then log in again"
        case let .timedOut(spec, waitingFor, after):
            return "\(spec): timed out after \(Self.seconds(after)) waiting for \(waitingFor)"
        case let .outputBacklog(spec, bytes):
            return "\(spec): the controller stopped taking what we write (\(bytes) bytes were waiting): "
                + "check its flow control (a UART's CTS line, a TCP peer that stopped reading), then open it again"
        case let .closedByPeer(spec):
            return "\(spec): the controller closed the connection"
        case let .notOpen(spec):
            return "\(spec): the transport is closed: open it again"
        case let .alreadyStarted(spec):
            return "\(spec): the transport is already started; start it once"
        case let .system(spec, operation, code, message):
            return "\(spec): \(operation.rawValue) failed: \(message) (errno \(code))"
        case let .radioScriptNotFound(searched):
            return "cannot find tools/virtual-radio/bareble_radio.py (looked in \(searched.joined(separator: ", "))): "
                + "set BAREBLE_RADIO_SCRIPT to its path or run from inside the BareBLE checkout"
        case let .radioNeedsBumble(python):
            return "the virtual radio needs Bumble, which \(python) cannot import: "
                + "run the setup command in README.md (it creates .venv with Bumble), or set BAREBLE_PYTHON"
        case let .radioFailed(detail):
            return "the virtual radio failed: \(detail)"
        }
    }

    private static func seconds(_ duration: Duration) -> String {
        let milliseconds = MonotonicClock.nanoseconds(in: duration) / 1_000_000
        return milliseconds % 1000 == 0 ? "\(milliseconds / 1000) s" : "\(milliseconds) ms"
    }

    /// Maps a failed system call to the error a user can act on. Pure: everything it needs
    /// is in the arguments.
    public static func from(
        errno code: Int32, operation: TransportOperation, spec: TransportSpec?, context: ErrorContext = ErrorContext()
    ) -> TransportError {
        let specText = spec?.description ?? "adapters"
        if code == EAFNOSUPPORT, operation == .socket || operation == .bind {
            return .noBluetoothInKernel(spec: specText)
        }
        switch spec {
        case let .tcp(host, port):
            switch code {
            case ECONNREFUSED: return .connectionRefused(host: host, port: port)
            case ETIMEDOUT where operation == .connect:
                return .timedOut(spec: specText, waitingFor: "the TCP connection", after: .zero)
            case ECONNRESET, EPIPE: return .closedByPeer(spec: specText)
            default: break
            }
        case let .serial(path, _, _):
            if operation == .open {
                switch code {
                case ENOENT, ENXIO: return .noSuchDevice(path: path)
                case EACCES, EPERM: return .deviceAccessDenied(path: path)
                default: break
                }
            }
        case let .hciUser(index):
            switch code {
            case EBUSY where operation == .bind || operation == .deviceDown || operation == .deviceUp: return .adapterBusy(index: index)
            case ENODEV: return .noSuchAdapter(index: index, present: context.adapters)
            case EPERM, EACCES:
                return .permissionDenied(
                    spec: specText, operation: operation, capability: "CAP_NET_ADMIN", executable: context.executable)
            default: break
            }
        case let .hciRaw(index):
            switch code {
            case ENODEV: return .noSuchAdapter(index: index, present: context.adapters)
            // Up or down refused: a user channel holds the adapter.
            case EBUSY where operation == .deviceUp || operation == .deviceDown: return .adapterBusy(index: index)
            case EPERM, EACCES:
                let capability = operation == .deviceUp || operation == .deviceDown ? "CAP_NET_ADMIN" : "CAP_NET_RAW"
                return .permissionDenied(
                    spec: specText, operation: operation, capability: capability, executable: context.executable)
            default: break
            }
        case .hciMonitor:
            if code == EPERM || code == EACCES {
                return .permissionDenied(
                    spec: specText, operation: operation, capability: "CAP_NET_RAW", executable: context.executable)
            }
        case .virtual, nil:
            if code == EPERM || code == EACCES {
                return .permissionDenied(
                    spec: specText, operation: operation, capability: "CAP_NET_ADMIN", executable: context.executable)
            }
        }
        if code == EPIPE || code == ECONNRESET { return .closedByPeer(spec: specText) }
        return .system(spec: specText, operation: operation, errno: code, message: Posix.message(code))
    }
}
