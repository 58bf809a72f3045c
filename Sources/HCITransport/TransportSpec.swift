import Glibc

/// A transport named by a string, as every tool's `--transport` flag takes it:
///
/// - `hci:N`: the Linux HCI user channel of hciN (exclusive; the device is taken down first)
/// - `hci-raw:N`: the raw channel of hciN, beside the kernel's own stack (device up)
/// - `hci-monitor`: the read-only monitor channel of all adapters (see ``HCIMonitor``)
/// - `tcp:HOST:PORT`: H4 over a TCP connection
/// - `serial:/dev/ttyX[,BAUD][,rtscts]`: H4 over a UART or pty (default 115200 baud)
/// - `virtual`: the project's virtual radio (Bumble's controller), launched on demand
public enum TransportSpec: Sendable, Hashable, CustomStringConvertible {
    case hciUser(index: Int)
    case hciRaw(index: Int)
    case hciMonitor
    case tcp(host: String, port: Int)
    case serial(path: String, baud: Int, flowControl: Bool)
    case virtual

    public static let defaultBaud = 115_200

    public init(parsing text: String) throws(TransportError) {
        func invalid(_ reason: String) -> TransportError { .invalidSpec(text, reason: reason) }
        func adapterIndex(_ digits: Substring) throws(TransportError) -> Int {
            guard let index = Int(digits), index >= 0, index < 0xFFFF, digits.allSatisfy(\.isASCII) else {
                throw invalid("adapter index must be a number such as 0")
            }
            return index
        }
        if text == "virtual" {
            self = .virtual
            return
        }
        if text == "hci-monitor" {
            self = .hciMonitor
            return
        }
        guard let colon = text.firstIndex(of: ":") else { throw invalid("missing \"kind:\" prefix") }
        let kind = text[..<colon]
        let rest = text[text.index(after: colon)...]
        switch kind {
        case "hci":
            self = .hciUser(index: try adapterIndex(rest))
        case "hci-raw":
            self = .hciRaw(index: try adapterIndex(rest))
        case "tcp":
            // The port follows the last colon, so an IPv6 literal in brackets works too.
            guard let portColon = rest.lastIndex(of: ":") else { throw invalid("expected tcp:HOST:PORT") }
            var host = rest[..<portColon]
            if host.hasPrefix("["), host.hasSuffix("]") { host = host.dropFirst().dropLast() }
            guard !host.isEmpty else { throw invalid("missing host") }
            guard let port = Int(rest[rest.index(after: portColon)...]), (1...65535).contains(port) else {
                throw invalid("port must be 1...65535")
            }
            self = .tcp(host: String(host), port: port)
        case "serial":
            let parts = rest.split(separator: ",", omittingEmptySubsequences: false)
            guard let path = parts.first, path.hasPrefix("/") else { throw invalid("expected an absolute device path") }
            var baud = Self.defaultBaud
            var flowControl = false
            var sawBaud = false
            for option in parts.dropFirst() {
                if option == "rtscts" {
                    flowControl = true
                } else if let value = Int(option), !sawBaud, SerialTransport.baudConstant(value) != nil {
                    baud = value
                    sawBaud = true
                } else {
                    throw invalid("\"\(option)\" is neither a supported baud rate nor rtscts")
                }
            }
            self = .serial(path: String(path), baud: baud, flowControl: flowControl)
        default:
            throw invalid("unknown kind \"\(kind)\"")
        }
    }

    public var description: String {
        switch self {
        case let .hciUser(index): "hci:\(index)"
        case let .hciRaw(index): "hci-raw:\(index)"
        case .hciMonitor: "hci-monitor"
        case let .tcp(host, port): host.contains(":") ? "tcp:[\(host)]:\(port)" : "tcp:\(host):\(port)"
        case let .serial(path, baud, flowControl):
            "serial:\(path)" + (baud == Self.defaultBaud ? "" : ",\(baud)") + (flowControl ? ",rtscts" : "")
        case .virtual: "virtual"
        }
    }

    /// Opens the transport. `hci-monitor` cannot send, so it is not a transport: open it
    /// with ``HCIMonitor/open()``. `wait` is how its reader thread waits for packets.
    public func open(wait: ReaderWait = .blocking) throws(TransportError) -> any HCITransport {
        switch self {
        case let .hciUser(index): return try HCISocketTransport.openUserChannel(index: index, wait: wait)
        case let .hciRaw(index): return try HCISocketTransport.openRawChannel(index: index, wait: wait)
        case .hciMonitor:
            throw .monitorCannotDrive
        case let .tcp(host, port): return try TCPTransport.connect(host: host, port: port, wait: wait)
        case let .serial(path, baud, flowControl):
            return try SerialTransport.open(path: path, baud: baud, flowControl: flowControl, wait: wait)
        case .virtual: return try VirtualRadio.openTransport(wait: wait)
        }
    }

    /// The transport a tool uses when none is given, and why, in one line to print.
    public struct DefaultChoice: Sendable, Hashable {
        public var spec: TransportSpec
        public var reason: String
    }

    /// `BAREBLE_TRANSPORT` if set; else the first adapter (up: `hci-raw:N`, beside the
    /// kernel; down: `hci:N`); else the virtual radio.
    public static func defaultChoice() throws(TransportError) -> DefaultChoice {
        let environment = getenv("BAREBLE_TRANSPORT").map { String(cString: $0) }
        let adapters: Result<[AdapterInfo], TransportError>
        do throws(TransportError) { adapters = .success(try Adapters.list()) } catch { adapters = .failure(error) }
        return try defaultChoice(environment: environment, adapters: adapters)
    }

    /// The pure part of ``defaultChoice()``: the decision from its inputs.
    public static func defaultChoice(
        environment: String?, adapters: Result<[AdapterInfo], TransportError>
    ) throws(TransportError) -> DefaultChoice {
        if let environment, !environment.isEmpty {
            return DefaultChoice(spec: try TransportSpec(parsing: environment), reason: "BAREBLE_TRANSPORT=\(environment)")
        }
        switch adapters {
        case let .success(list):
            if let first = list.first {
                let spec: TransportSpec = first.isUp ? .hciRaw(index: first.index) : .hciUser(index: first.index)
                let state = first.isUp ? "up, shared with the kernel" : "down, taken exclusively"
                return DefaultChoice(spec: spec, reason: "using hci\(first.index) (\(state)) as \(spec)")
            }
            return DefaultChoice(
                spec: .virtual, reason: "no Bluetooth adapter here: using the virtual radio with its demo peers")
        case let .failure(error):
            if case .noBluetoothInKernel = error {
                return DefaultChoice(
                    spec: .virtual,
                    reason: "no Bluetooth adapter here (kernel has no AF_BLUETOOTH): "
                        + "using the virtual radio with its demo peers")
            }
            return DefaultChoice(
                spec: .virtual, reason: "cannot list adapters (\(error)): using the virtual radio with its demo peers")
        }
    }
}
