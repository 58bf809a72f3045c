import ArgumentParser
import BareBLE
import BluetoothCore
import CAllocationCounter
import Glibc
import HCITransport
import SMP

/// `bareble-bench soak`: many connect/explore/disconnect cycles, then many pairings, against
/// the virtual radio's peripheral through the facade, sampling this process's resident
/// memory, open descriptors and threads as it goes. A leak shows as a column that keeps
/// growing after the warm-up; the figures are printed, never asserted on.
struct SoakBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "soak",
        abstract: "Connect/explore/disconnect cycles and pairings against the virtual radio, with RSS, descriptors and threads sampled."
    )

    @Option(help: "Connect, explore (discover, read every readable value), disconnect: this many times.")
    var cycles = 10_000

    @Option(help: "Then connect, pair (LE Secure Connections, Just Works, no bond), disconnect: this many times.")
    var pairings = 1_000

    @Option(help: "Print a sample every this many cycles or pairings.")
    var every = 1_000

    static let peer = DeviceAddress(BluetoothAddress(0xC44B_4D00_0001), type: .random)

    func validate() throws {
        guard cycles >= 0, pairings >= 0, every > 0 else { throw ValidationError("counts must not be negative and --every must be positive") }
    }

    func run() async throws {
        let radio = try VirtualRadio.launch(arguments: ["--tcp", "--peripheral"])
        defer { radio.stop() }
        // No bond store: every pairing is a fresh one, and nothing on disk grows.
        let security = SecurityPolicy(pairing: PairingConfiguration(bonding: false), pairsWhenRequired: false)
        let central = try Central.open(.tcp(host: "127.0.0.1", port: radio.tcpPort), security: security)
        defer { central.close() }
        _ = try await central.powerOn()
        print("bareble-bench soak: \(cycles) connect/explore/disconnect cycles, then \(pairings) pairings, against \(Self.peer)")
        print("phase     done       RSS KiB  heap KiB   fds  threads   per-cycle ms")
        let clock = ContinuousClock()
        var start = clock.now
        sample("start", 0, since: nil)
        var valueBytes = 0
        for cycle in stride(from: 1, through: cycles, by: 1) {
            // A whole discovery every time, as `bareble-central explore` does without a cache.
            central.cache.forget(Self.peer)
            let peripheral = try await central.connect(to: Self.peer, timeout: .seconds(10))
            for service in try await peripheral.discoverServices() {
                for characteristic in service.characteristics where characteristic.properties.contains(.read) {
                    valueBytes += try await readUnlessEncrypted(characteristic, of: peripheral)
                }
            }
            try await peripheral.disconnect()
            drain(radio)
            if cycle % every == 0 || cycle == cycles {
                sample("explore", cycle, since: (start, every: cycle % every == 0 ? every : cycle % every))
                start = clock.now
            }
        }
        for pairing in stride(from: 1, through: pairings, by: 1) {
            let peripheral = try await central.connect(to: Self.peer, timeout: .seconds(10))
            let outcome = try await peripheral.pair()
            guard peripheral.isEncrypted else { throw BenchError("pairing \(pairing) ended (\(outcome)) without encryption") }
            try await peripheral.disconnect()
            drain(radio)
            if pairing % every == 0 || pairing == pairings {
                sample("pair", pairing, since: (start, every: pairing % every == 0 ? every : pairing % every))
                start = clock.now
            }
        }
        print("read \(grouped(valueBytes)) value bytes in all")
    }

    /// The value's length; 0 for the characteristics that need pairing (the pairings phase
    /// covers those).
    private func readUnlessEncrypted(_ characteristic: Characteristic, of peripheral: Peripheral) async throws -> Int {
        do {
            return try await peripheral.readValue(for: characteristic).count
        } catch {
            guard error.needsPairing else { throw error }
            return 0
        }
    }

    /// The radio reports every connection and ATT request on its stdout, which this
    /// process keeps until read: read and drop it, so the figures are the stack's own.
    private func drain(_ radio: VirtualRadio) {
        while (try? radio.nextLine(timeout: .zero)) != nil {}
    }

    private func sample(_ phase: String, _ done: Int, since: (ContinuousClock.Instant, every: Int)?) {
        let usage = ProcessUsage.now()
        let perCycle = since.map { fixed(nanoseconds(ContinuousClock.now - $0.0) / 1e6 / Double($0.every), 2) } ?? "-"
        print("\(phase.padding(8)) \(padded(grouped(done), 6)) \(padded(grouped(usage.residentKiB), 13)) \(padded(grouped(usage.heapKiB), 9)) \(padded(String(usage.descriptors), 5)) \(padded(String(usage.threads), 8)) \(padded(perCycle, 14))")
    }
}

/// This process's resident memory, open descriptors and threads, from /proc.
struct ProcessUsage {
    var residentKiB = 0, heapKiB = 0, descriptors = 0, threads = 0

    static func now() -> ProcessUsage {
        var usage = ProcessUsage()
        usage.descriptors = entries(in: "/proc/self/fd") - 1  // the one opendir holds
        usage.threads = entries(in: "/proc/self/task")
        usage.heapKiB = Int(bareble_heap_bytes_in_use() / 1024)
        if let status = read("/proc/self/status"),
           let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }) {
            usage.residentKiB = Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
        }
        return usage
    }

    private static func entries(in path: String) -> Int {
        guard let directory = opendir(path) else { return 0 }
        defer { closedir(directory) }
        var count = 0
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { count += 1 }
        }
        return count
    }

    private static func read(_ path: String) -> String? {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            bytes += buffer[0..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension String {
    fileprivate func padding(_ width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
