import BluetoothCore
import CAllocationCounter
import Dispatch
import Glibc
import HCI
import HCITransport
import Synchronization

/// A fake controller on a byte-stream descriptor (one end of a socketpair, or a TCP
/// connection a host made to ``FloodController``): answers bring-up, scan and ACL like a
/// small LE controller, then streams whatever frames the benchmark writes as fast as asked.
/// The host side is an ordinary transport, so the benchmark runs the host's real reader path.
final class StreamController: Sendable {
    typealias ACLAnswer = @Sendable (ACLDataPacket) -> [[UInt8]]

    private let fd: Int32
    private let writeLock = Lock(())
    private let scanEnabled = Atomic(false)
    /// Signalled each time the host enables scanning.
    let scanStarted = DispatchSemaphore(value: 0)
    /// Signalled when the host has closed its end.
    private let hostGone = DispatchSemaphore(value: 0)
    /// The CPU clock of the thread that answers the host (-1 until it runs).
    private let answeringClock = Atomic<Int32>(-1)

    /// Serves the host on `fd`. `acl` gives the H4 frames to send back for one ACL packet
    /// from the host (the packets of one read are also acknowledged, together, with one
    /// Number Of Completed Packets).
    init(fd: Int32, acl: @escaping ACLAnswer = { _ in [] }) {
        self.fd = fd
        DispatchQueue.global().async { [self] in
            var clock = clockid_t()
            if pthread_getcpuclockid(pthread_self(), &clock) == 0 { answeringClock.store(clock, ordering: .releasing) }
            // The fake controller's allocations are not the host's; the pool thread counts
            // again once it is handed back.
            bareble_allocation_counter_ignore_thread(1)
            answerHost(fd, acl: acl)
            bareble_allocation_counter_ignore_thread(0)
            answeringClock.store(-1, ordering: .releasing)
            hostGone.signal()
        }
    }

    /// A fake controller on one end of a socketpair, and BareBLE's transport on the other,
    /// its reader waiting as `wait` says.
    static func pair(acl: @escaping ACLAnswer = { _ in [] }, wait: ReaderWait = .blocking) throws -> (StreamController, DescriptorTransport) {
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0 else { throw BenchError("socketpair failed") }
        let transport = try DescriptorTransport.stream(fd: pair[1], name: "socketpair", wait: wait)
        return (StreamController(fd: pair[0], acl: acl), transport)
    }

    var isScanning: Bool { scanEnabled.load(ordering: .acquiring) }

    /// CPU time the thread answering the host has used, so a benchmark can take the fake
    /// controller's work (and its ACL answers') out of the process's; 0 before it runs.
    func answeringCPUNanoseconds() -> Double {
        let clock = answeringClock.load(ordering: .acquiring)
        guard clock != -1 else { return 0 }
        var time = timespec()
        guard clock_gettime(clock, &time) == 0 else { return 0 }
        return Double(time.tv_sec) * 1e9 + Double(time.tv_nsec)
    }

    /// Writes bytes that hold whole frames, under the lock shared with the answers.
    func write(_ bytes: [UInt8]) {
        writeLock.withLock { _ in
            bytes.withUnsafeBytes { raw in
                var sent = 0
                while sent < raw.count {
                    let written = Glibc.write(fd, raw.baseAddress! + sent, raw.count - sent)
                    if written <= 0 { return }
                    sent += written
                }
            }
        }
    }

    /// Answers what the host sends, one read at a time: commands at once, and the ACL
    /// packets of one read with one Number Of Completed Packets (a count per connection, as
    /// a controller reports what went out in a connection event) followed by their answers,
    /// in one write.
    private func answerHost(_ fd: Int32, acl: ACLAnswer) {
        var framer = H4Framer(configuration: .init(acceptedTypes: [.command, .acl]))
        var chunk = [UInt8](repeating: 0, count: 4096)
        var completed = CompletedPackets()
        var answers: [UInt8] = []
        while true {
            let count = read(fd, &chunk, chunk.count)
            if count <= 0 { return }
            framer.feed(Array(chunk[0..<count])) { packet in
                switch packet.type {
                case .command: answerCommand(packet.bytes)
                case .acl:
                    guard let packet = try? ACLDataPacket(decoding: packet.bytes) else { return }
                    completed.add(packet.connectionHandle)
                    for frame in acl(packet) { answers += frame }
                default: break
                }
            }
            guard !completed.isEmpty else { continue }
            write(completed.take() + answers)
            answers.removeAll(keepingCapacity: true)
        }
    }

    /// Packets sent since the last Number Of Completed Packets, per connection in order.
    private struct CompletedPackets {
        private var counts: [(handle: UInt16, packets: UInt16)] = []
        var isEmpty: Bool { counts.isEmpty }

        mutating func add(_ handle: UInt16) {
            if let index = counts.firstIndex(where: { $0.handle == handle }) {
                counts[index].packets += 1
            } else {
                counts.append((handle, 1))
            }
        }

        /// The H4 event that returns them, and an empty tally.
        mutating func take() -> [UInt8] {
            defer { counts.removeAll(keepingCapacity: true) }
            return StreamController.completedPackets(counts)
        }
    }

    private func answerCommand(_ bytes: [UInt8]) {
        let opcode = HCIOpcode(rawValue: UInt16(bytes[0]) | UInt16(bytes[1]) << 8)
        let returned = [0] + answer(opcode, Array(bytes[3...]))
        let event = HCIEvent.commandComplete(.init(numHCICommandPackets: 1, opcode: opcode, returnParameters: returned))
        write([0x04] + event.encode())
    }

    /// H4 Number Of Completed Packets for one packet of `handle`: the credit back.
    static func completedPacket(_ handle: UInt16) -> [UInt8] { completedPackets([(handle, 1)]) }

    /// H4 Number Of Completed Packets returning `counts` packets, per connection handle.
    static func completedPackets(_ counts: [(handle: UInt16, packets: UInt16)]) -> [UInt8] {
        [0x04] + HCIEvent.numberOfCompletedPackets(.init(completions: counts.map { .init(connectionHandle: $0.handle, completedPackets: $0.packets) })).encode()
    }

    private func answer(_ opcode: HCIOpcode, _ parameters: [UInt8]) -> [UInt8] {
        var writer = ByteWriter()
        switch opcode {
        case ReadLocalVersionInformation.opcode:
            ReadLocalVersionInformation.ReturnParameters(hciVersion: 0x0C, hciSubversion: 0, lmpVersion: 0x0C, manufacturer: 0xFFFF, lmpSubversion: 0).encode(into: &writer)
        case ReadLocalSupportedCommands.opcode:
            SupportedCommands(commands: [
                LESetExtendedScanParameters.self, LESetExtendedScanEnable.self, LESetScanParameters.self,
                LESetScanEnable.self, LEReadBufferSizeV1.self,
            ]).encode(into: &writer)
        case ReadLocalSupportedFeatures.opcode:
            writer.write(LMPFeatures([.leSupportedController, .brEdrNotSupported]).rawValue)
        case LEReadLocalSupportedFeatures.opcode:
            writer.write(LEFeatures([.leExtendedAdvertising]).rawValue)
        case ReadBDADDR.opcode:
            writer.write(BluetoothAddress(0xF00D_0000_BE4C))
        case LEReadBufferSizeV1.opcode:
            writer.write(UInt16(251))
            writer.write(UInt8(8))
        case LESetExtendedScanEnable.opcode, LESetScanEnable.opcode:
            let enable = parameters.first == 1
            if enable, !scanEnabled.exchange(true, ordering: .acquiringAndReleasing) { scanStarted.signal() }
            if !enable { scanEnabled.store(false, ordering: .releasing) }
        default:
            break
        }
        return writer.bytes
    }

    /// Ends the connection; the host's reader sees the end of the stream.
    func close() {
        Glibc.shutdown(fd, Int32(SHUT_RDWR))
    }

    /// Ends the stream the host reads, after everything written, and waits (up to
    /// `seconds`) for the host to close its end. A process that exits right after a write
    /// may reset the connection instead (the lingering-close problem), and the host's
    /// kernel then throws away what the host had not read yet.
    func finishAndWaitForHost(seconds: Int = 60) {
        Glibc.shutdown(fd, Int32(SHUT_WR))
        _ = hostGone.wait(timeout: .now() + .seconds(seconds))
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
