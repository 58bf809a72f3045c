import ArgumentParser
import BareBLE
import BluetoothCore
import Glibc
import HCI
import ToolSupport

/// `bareble-central subscribe ADDR CHAR`: one line per notified or indicated value.
struct Subscribe: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Subscribe to notifications (or --indicate) and print one timestamped line per value.",
        discussion: """
            Runs until --count values arrived, Ctrl-C, or the link ends. Before it exits it \
            turns the subscription off on the peer (writes the CCCD back to 0) and disconnects. \
            Timestamps are UTC, HH:MM:SS.mmm. 
            """ + AttributeSelector.help
    )

    @OptionGroup var device: PeripheralOptions

    @Argument(help: "The characteristic: UUID or handle.")
    var characteristic: String

    @Option(help: "Stop after this many values.")
    var count: Int?

    @Flag(help: "Ask for indications (confirmed) instead of notifications.")
    var indicate = false

    @Flag(help: "Print JSON lines instead of text.")
    var json = false

    func validate() throws {
        guard AttributeSelector(characteristic) != nil else { throw ValidationError("\(characteristic) is neither a UUID nor a handle. \(AttributeSelector.help)") }
        if let count, count <= 0 { throw ValidationError("--count must be at least 1") }
    }

    enum Event: Sendable {
        case value([UInt8])
        case stop
    }

    func run() async throws {
        let selector = AttributeSelector(characteristic)!
        let ending = try await device.connect { _, peripheral in
            guard case .characteristic(let target) = try await peripheral.select(selector, address: device.address) else {
                throw ToolError("\(selector) is a descriptor: subscribe to a characteristic")
            }
            let values: AsyncStream<[UInt8]>
            do throws(PeripheralError) {
                values = try await peripheral.notifications(for: target, indicate: indicate)
            } catch {
                throw ToolError(userMessage(error, doing: "subscribing to \(selector)"))
            }
            printError("subscribed to \(Explore.label(target.uuid, target.name)) (\(indicate ? "indications" : "notifications")); Ctrl-C stops")
            let (events, continuation) = AsyncStream.makeStream(of: Event.self)
            let stop = StopRequest(after: nil) { continuation.yield(.stop) }
            defer { stop.cancel() }
            let forward = Task {
                for await value in values { continuation.yield(.value(value)) }
                continuation.yield(.stop)
            }
            defer { forward.cancel() }
            var received = 0
            for await event in events {
                guard case .value(let value) = event else { break }
                received += 1
                let reading = ValueReading(value: value, decoded: target.decodedValue())
                let time = Self.timestamp()
                writeOut((json ? JSONValue.object([("time", .string(time))] + reading.jsonMembers).text : "\(time)  \(reading.text)") + "\n")
                if let count, received >= count { break }
            }
            if peripheral.state == .connected {
                do throws(PeripheralError) {
                    try await peripheral.setNotifyValue(false, for: target)
                } catch {
                    printError(userMessage(error, doing: "unsubscribing"))
                }
                return "unsubscribed after \(received) values"
            }
            var reason: HCIErrorCode?
            if case let .disconnected(ended) = peripheral.state { reason = ended }
            return "the link ended after \(received) values (\(reason.map { "\($0)" } ?? "transport closed"))"
        }
        printError(ending)
    }

    /// Wall-clock time of day, UTC, to the millisecond.
    static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var parts = tm()
        var seconds = now.tv_sec
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let millis = Int(now.tv_nsec / 1_000_000)
        let fraction = millis < 10 ? "00\(millis)" : millis < 100 ? "0\(millis)" : "\(millis)"
        return "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)).\(fraction)"
    }
}
