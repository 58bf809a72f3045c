import ArgumentParser
import Glibc
import HCI
import HCITransport

/// The options every subcommand shares: which controller, and where to record the traffic.
public struct TransportOptions: ParsableArguments, Sendable {
    public init() {}

    @Option(help: "The controller: tcp:HOST:PORT, serial:/dev/ttyX[,BAUD][,rtscts], hci:N, hci-raw:N or virtual. Default: $BAREBLE_TRANSPORT, else the first adapter, else the virtual radio.")
    public var transport: String?

    @Option(help: "Record every HCI packet, both ways, to this btsnoop file (Wireshark and tshark read it).")
    public var btsnoop: String?

    @Flag(help: "Print every HCI packet, both ways, decoded as bareble-trace shows it, on stderr (lines stderr does not take in time are dropped and counted, never waited for).")
    public var trace = false

    @Flag(name: [.customShort("v"), .customLong("verbose")], help: "Log more of what the stack does, on stderr: -v connections, pairings and recoveries (info), -vv debug, -vvv trace. Default: the level in $BAREBLE_LOG (trace, debug, info or warning), else warnings and errors only.")
    public var verbosity: Int

    /// Opens the transport and starts the driver; the controller is not yet powered on.
    /// A capture is created only for a transport that can be driven, and removed again when
    /// the transport does not open, so a failed run leaves no header-only file behind. `tap`
    /// sees every packet too (`hci` and `att` print what their packet provoked).
    public func openController(readerWait: ReaderWait = .blocking, tap extra: TraceTap? = nil) throws -> HCIController {
        // Before the first layer makes its logger.
        ToolLogging.bootstrap(level: try ToolLogging.level(verbosity: verbosity, environment: getenv(ToolLogging.environmentVariable).map { String(cString: $0) }))
        let spec: TransportSpec
        do throws(TransportError) {
            if let transport {
                spec = try TransportSpec(parsing: transport)
            } else {
                let choice = try TransportSpec.defaultChoice()
                if choice.spec == .virtual { printError(choice.reason) }
                spec = choice.spec
            }
            if spec == .hciMonitor { throw .monitorCannotDrive }
        } catch {
            throw ToolError(error.description)
        }
        let writer: BTSnoopWriter?
        do {
            writer = try btsnoop.map { try BTSnoopWriter(path: $0, datalink: .h4) }
        } catch {
            throw ToolError("cannot record to \(btsnoop ?? ""): \(error)")
        }
        do throws(TransportError) {
            var taps: [TraceTap] = trace ? [TraceTap()] : []
            if let extra { taps.append(extra) }
            var observe: CapturingTransport.Observer?
            if !taps.isEmpty {
                let all = taps
                observe = { packet, direction in
                    for tap in all { tap.observe(packet, direction) }
                }
            }
            let all = taps
            return try HCIController.open(
                spec, capture: writer, observe: observe, observeFinished: { for tap in all { tap.close() } }, readerWait: readerWait)
        } catch {
            if let btsnoop {
                writer?.close()
                unlink(btsnoop)
            }
            throw ToolError(error.description)
        }
    }

    /// Opens the transport and powers the controller on (reset, bring-up); on failure the
    /// transport is closed again and the error says why.
    public func openPoweredController(readerWait: ReaderWait = .blocking) async throws -> HCIController {
        let controller = try openController(readerWait: readerWait)
        do {
            try await controller.powerOn()
        } catch {
            controller.close()
            throw ToolError(error.description)
        }
        return controller
    }
}

/// A failure already phrased for the user: printed as is, exit status 1.
public struct ToolError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

public func printError(_ line: String) {
    var standardError = StandardError()
    print(line, to: &standardError)
}

public struct StandardError: TextOutputStream {
    public init() {}

    public mutating func write(_ string: String) {
        var bytes = Array(string.utf8)
        while !bytes.isEmpty {
            let written = Glibc.write(2, bytes, bytes.count)
            if written <= 0 { return }
            bytes.removeFirst(written)
        }
    }
}
