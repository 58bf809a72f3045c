import ArgumentParser
import BluetoothCore
import HCITransport
import Synchronization
import ToolSupport

struct Live: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Decode the kernel's monitor channel live: every adapter, until Ctrl-C.",
        discussion: "Needs CAP_NET_RAW (root, or setcap cap_net_raw+ep on the binary)."
    )

    @OptionGroup var options: DecodeOptions

    @Option(name: .long, help: "Stop after this many seconds.")
    var duration: Double?

    func run() async throws {
        let monitor = try HCIMonitor.open()
        let printer = Lock(try TracePrinter(options))
        let number = Atomic<Int>(0)
        let (ended, finish) = AsyncStream<String?>.makeStream()
        try monitor.start(receive: { record in
            let count = number.add(1, ordering: .relaxed).newValue
            let capture = CaptureRecord(number: count, index: record.index, opcode: record.opcode, timestamp: record.timestamp ?? (BTSnoop.now() - BTSnoop.epochOffset), payload: record.payload)
            printer.withLock { printer in
                do {
                    try printer.handle(capture)
                    printer.flush()
                } catch {
                    finish.yield("\(error)")
                }
            }
        }, closed: { error in finish.yield(error.map { "\($0)" }) })
        let stop = StopRequest(after: duration) { finish.yield(nil) }
        var reason: String?
        for await first in ended {
            reason = first
            break
        }
        stop.cancel()
        monitor.close()
        printer.withLock { $0.close() }
        if let reason { throw ToolError(reason) }
    }
}
