import ArgumentParser
import ATT

/// `bareble-bench server`: our GATT server through the real path (socketpair, reader
/// thread, driver, L2CAP, ATT server, GATT store, ``PeripheralManager``), reads answered
/// and notifications sent per second, beside Bumble's GATT server fed the same bytes in
/// the same run.
struct ServerBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "server",
        abstract: "Reads answered and notifications sent per second by the GATT server, against Bumble's server on the same stream."
    )

    @Option(help: "Read Requests per run (one outstanding at a time).")
    var reads = 50_000

    @Option(help: "Notifications per run.")
    var notifications = 200_000

    @Option(help: "Value sizes to measure (bytes; at most 244 so one notification fits a 251-byte ACL packet).")
    var sizes: [Int] = [20, 244]

    @Option(parsing: .upToNextOption, help: "Centrals connected at once, one run each (1 ... 8): reads are one outstanding per central, each updateValue notifies every central.")
    var connections: [Int] = [1, 4]

    @Option(help: "Python with bumble installed, for the baseline (default: the checkout's .venv, else python3).")
    var python: String?

    @Flag(help: "Skip the Bumble baseline.")
    var skipBumble = false

    func validate() throws {
        for size in sizes where !(1...244).contains(size) { throw ValidationError("--sizes \(size) is outside 1 ... 244") }
        for count in connections where !(1...8).contains(count) { throw ValidationError("--connections \(count) is outside 1 ... 8") }
        guard reads > 0, notifications > 0 else { throw ValidationError("--reads and --notifications must be more than 0") }
    }

    func run() async throws {
        print("bareble-bench server: \(grouped(reads)) Read Requests and \(grouped(notifications)) updateValue calls per size and number of centrals, ATT_MTU 517, 251-byte ACL packets (8 controller buffers), credits returned at once")
        for count in connections { try await run(connections: count) }
    }

    private func run(connections count: Int) async throws {
        let link = try await ServerLink(connections: count)
        print("\(count) central\(count == 1 ? "" : "s"):")
        // Warm up allocators and caches once.
        _ = try await link.reads(min(reads, 5_000))
        _ = try await link.notifications(min(notifications, 20_000), value: [0])
        let setup = link.handles.flatMap { ServerLink.setupFrames(configurationHandle: link.configurationHandle, handle: $0) }
        let credits = link.handles.map { StreamController.completedPacket($0) }
        for size in sizes {
            let value = (0..<size).map { UInt8(truncatingIfNeeded: $0) }
            link.manager.store.setValue(value, at: link.valueHandle)
            let read = try await link.reads(reads)
            report("reads", size, read, unit: "reads/s")
            if !skipBumble {
                // The same requests, central after central in turn, each fed once Bumble has
                // answered the one before (its host takes one PDU at a time either way).
                let requests = link.readRequests()
                let stream = setup + (0..<reads).map { index in
                    let handle = link.handles[index % count]
                    return requests[handle]! + credits[index % count]
                }
                let bumble = try bumbleRun(stream, mode: "reads", count: reads, setup: setup.count, link: link, size: size)
                print("Bumble   reads   \(padded(String(size), 3)) B  \(padded(fixed(bumble), 9)) reads/s          ratio \(fixed(read.perSecond / bumble, 1)) x")
            }
            let sent = try await link.notifications(notifications, value: value)
            report("notify", size, sent, unit: "notifications/s")
            if !skipBumble {
                // The baseline makes its own credits, 8 packets' worth in one event.
                let stream = setup
                let bumble = try bumbleRun(stream, mode: "notify", count: notifications, setup: setup.count, link: link, size: size)
                print("Bumble   notify  \(padded(String(size), 3)) B  \(padded(fixed(bumble), 9)) notifications/s  ratio \(fixed(sent.perSecond / bumble, 1)) x")
            }
        }
        link.finish()
    }

    private func report(_ what: String, _ size: Int, _ result: ServerLink.Result, unit: String) {
        var line = "BareBLE  \(what.padding(6)) \(padded(String(size), 3)) B  \(padded(fixed(result.perSecond), 9)) \(unit.padding(16))"
        line += " \(padded(fixed(result.hostCPUMicroseconds, 2), 5)) µs host CPU each (\(fixed(result.processCPUMicroseconds, 2)) with the fake controller)"
        line += ", \(fixed(result.allocations, 1)) allocations each"
        if what == "notify" { line += ", \(grouped(result.refused)) refused for a full queue" }
        print(line)
    }

    private func bumbleRun(_ frames: [[UInt8]], mode: String, count: Int, setup: Int, link: ServerLink, size: Int) throws -> Double {
        try BumbleBaseline.run(
            "bumble_server_baseline.py", stream: frames.flatMap { $0 },
            arguments: [mode, String(count), String(setup), String(link.valueHandle), String(size), String(link.handles.count)],
            key: "per_second", python: python)
    }
}

extension String {
    /// Left-aligned in `width` columns.
    fileprivate func padding(_ width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
