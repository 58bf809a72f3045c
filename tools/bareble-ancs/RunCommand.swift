import ANCS
import ANCSConsumer
import ArgumentParser
import BareBLE
import BluetoothCore
import Glibc
import HCI
import ToolSupport

/// `bareble-ancs run`: advertise to iPhones, show their notifications and media until
/// Ctrl-C, --duration or --count, taking actions on stdin.
struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Receive an iPhone's notifications; one JSON line per event with --json (the default into a pipe), a readable line on a terminal.",
        discussion: """
            Pair once: on the iPhone open Settings > Bluetooth, tap the --name shown under \
            Other Devices, accept the pairing and answer Allow when it asks to share \
            notifications. Later connections use the bond, also when the phone's address has \
            rotated. Commands on stdin, one per line: `positive UID`, `negative UID` (the \
            notification's actions), `media play|pause|toggle|next|previous|volume-up|volume-down`. \
            Events: advertising, connected, paired, encrypted, subscribed, notification, action, \
            media, media-commands, problem, link-failed, disconnected.
            """
    )

    @OptionGroup var transport: TransportOptions
    @OptionGroup var pairing: PairingOptions

    @Option(help: "The name the iPhone lists (scan response and GAP Device Name).")
    var name: String = "BareBLE"

    @Flag(inversion: .prefixedNo, help: "JSON lines on stdout (default: on when stdout is not a terminal).")
    var json: Bool?

    @Option(help: "Stop after this many added notifications.")
    var count: Int?

    @Option(help: "Stop after this many seconds instead of waiting for Ctrl-C.")
    var duration: Double?

    @Option(help: "Run this shell command for each notification, with its JSON line on stdin.")
    var exec: String?

    @Option(name: .customLong("message-length"), help: "The most octets of a message to fetch (the iPhone truncates to it).")
    var messageLength: UInt16 = 2048

    @Flag(name: .customLong("no-media"), help: "Do not subscribe Apple Media Service.")
    var noMedia = false

    func validate() throws {
        if let count, count <= 0 { throw ValidationError("--count \(count) is not a positive number") }
        if let duration, !(duration.isFinite && duration > 0 && duration < 1e7) {
            throw ValidationError("--duration \(duration) is not a positive number of seconds")
        }
        if name.isEmpty || name.utf8.count > 248 { throw ValidationError("--name must be 1 to 248 octets of UTF-8") }
    }

    func run() async throws {
        let controller = try transport.openController()
        defer { controller.close() }
        let info: ControllerInfo
        do { info = try await controller.powerOn() } catch { throw ToolError(error.description) }
        let policy = try pairing.policy(address: info.address)
        let central = Central(controller: controller, cache: GATTCache(directory: nil), security: policy)
        defer { central.close() }
        let consumer: ANCSConsumer
        do {
            consumer = try ANCSConsumer(central: central, options: ANCSConsumer.Options(
                name: name, session: ANCSSessionConfiguration(messageLength: messageLength), media: !noMedia))
        } catch {
            throw ToolError(error.description)
        }
        let lines = EventLines(json: json ?? (isatty(1) == 0))
        let runner = exec.map { command in
            ExecRunner(command: command) { reason, failed in
                lines.line([("event", .string("exec-failed")), ("reason", .string(reason)), ("failed", .int(failed))],
                           text: "--exec could not run (\(failed) so far): \(reason)")
            }
        }
        let (finished, finish) = AsyncStream.makeStream(of: Void.self)
        let events = consumer.events()
        let limit = count
        let reporter = Task {
            var added = 0
            for await event in events {
                lines.write(event)
                guard case let .notification(notification) = event else { continue }
                if let runner, !runner.run(input: JSONValue.object(EventLines.members(notification)).text + "\n") {
                    lines.line([("event", .string("exec-skipped")), ("uid", .int(Int(notification.event.uid))), ("skipped", .int(runner.skipped))],
                               text: "--exec skipped for \(notification.event.uid): \(ExecRunner.limit) runs already waiting")
                }
                if notification.event.kind == .added {
                    added += 1
                    if let limit, added >= limit { finish.yield() }
                }
            }
        }
        do { try await consumer.start() } catch { throw ToolError(error.description) }
        let control = Task { await StdinControl(consumer: consumer, lines: lines).run() }
        let stop = StopRequest(after: duration) { finish.yield() }
        for await _ in finished { break }
        stop.cancel()
        control.cancel()
        await consumer.stop()
        reporter.cancel()
        if let runner, !runner.finish(within: 5) {
            printError("bareble-ancs: --exec runs still going after 5 s were left running")
        }
    }
}
