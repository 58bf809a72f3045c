import ATT
import BareBLE
import BluetoothCore
import CAllocationCounter
import GATT
import HCI
import HCITransport
import L2CAP

/// BareBLE's GATT server, a ``PeripheralManager`` serving one characteristic (read, notify),
/// with its real stack on the host side of a socketpair: reader thread, H4 framer, driver,
/// L2CAP, ATT server, GATT server store, the manager. The fake controller on the other end
/// plays the centrals (``FakeCentral``): each connects, exchanges the MTU, subscribes, and
/// then reads or counts notifications; the ACL packets of each read the fake controller
/// makes get their credits back at once, in one Number Of Completed Packets.
struct ServerLink {
    static let connectionHandle = NotificationLink.connectionHandle
    /// The handles of `count` centrals' links: 0x0040, 0x0041, ...
    static func connectionHandles(_ count: Int) -> [UInt16] { (0..<count).map { connectionHandle + UInt16($0) } }
    static let mtu: UInt16 = 517
    static let characteristicUUID = BluetoothUUID(UInt16(0x2A19))

    let controller: StreamController
    let transport: DescriptorTransport
    let central: Central
    let manager: PeripheralManager
    let valueHandle: UInt16
    let configurationHandle: UInt16
    let peer: FakeCentral
    /// The centrals' connection handles.
    let handles: [UInt16]

    init(connections: Int = 1) async throws {
        handles = Self.connectionHandles(connections)
        let peer = FakeCentral()
        self.peer = peer
        (controller, transport) = try StreamController.pair(acl: { peer.answer($0) })
        let hci = HCIController(transport: transport)
        try hci.start()
        central = Central(controller: hci)
        try await central.powerOn()
        var data = AdvertisingDataBuilder()
        data.flags(.generalDiscoverableLEOnly)
        let level = GATTDatabase.Characteristic(uuid: Self.characteristicUUID, properties: [.read, .notify], value: [100])
        manager = try PeripheralManager(
            central: central, advertising: PeripheralHost.Options(data: try data.build()),
            services: [GATTDatabase.Service(uuid: BluetoothUUID(UInt16(0x180F)), characteristics: [level])])
        guard let characteristic = manager.database.characteristic(Self.characteristicUUID),
            let configuration = characteristic.descriptors.first(where: { $0.uuid == GATTUUID.clientCharacteristicConfiguration })
        else { throw BenchError("the server laid out no CCCD for the notifying characteristic") }
        valueHandle = characteristic.valueHandle
        configurationHandle = configuration.handle

        let manager = self.manager
        for handle in handles {
            let events = manager.events()
            let frames = Self.setupFrames(configurationHandle: configurationHandle, handle: handle)
            controller.write(frames[0])
            try await within(seconds: 10, "connection 0x\(Hex.string(handle))") {
                for await event in events { if case .host(.connected) = event { return } }
            }
            guard case .exchangeMTUResponse(let exchange)? = await peer.request(frames[1], on: controller),
                exchange.serverRxMTU >= Self.mtu
            else { throw BenchError("the server did not answer the MTU exchange with \(Self.mtu)") }
            let answer = await peer.request(frames[3], on: controller)
            guard case .writeResponse? = answer else {
                throw BenchError("the server did not accept the CCCD write: \(String(describing: answer))")
            }
        }
        guard manager.store.subscribers(of: valueHandle).count == handles.count else {
            throw BenchError("\(manager.store.subscribers(of: valueHandle).count) centrals subscribed, not \(handles.count)")
        }
    }

    /// What one central sends before the workload, as H4 frames in order: the connection,
    /// Exchange MTU Request (517), the credit for its response, the CCCD write (notifications
    /// on), the credit for its response. Bumble's baseline is fed the same, central after
    /// central.
    static func setupFrames(configurationHandle: UInt16, handle: UInt16) -> [[UInt8]] {
        let credit = StreamController.completedPacket(handle)
        return [
            NotificationLink.connectionComplete(handle: handle),
            NotificationLink.aclFrame(ATTPDU.exchangeMTURequest(.init(clientRxMTU: mtu)).encode(), handle: handle), credit,
            NotificationLink.aclFrame(ATTPDU.writeRequest(.init(attributeHandle: configurationHandle, attributeValue: [0x01, 0x00])).encode(), handle: handle), credit,
        ]
    }

    /// Each central's Read Request of the value.
    func readRequests() -> [UInt16: [UInt8]] {
        let pdu = ATTPDU.readRequest(.init(attributeHandle: valueHandle)).encode()
        return Dictionary(uniqueKeysWithValues: handles.map { ($0, NotificationLink.aclFrame(pdu, handle: $0)) })
    }

    struct Result {
        var perSecond: Double
        /// The process's CPU less the fake controller's thread, per operation.
        var hostCPUMicroseconds: Double
        var processCPUMicroseconds: Double
        /// Allocations by every thread but the fake controller's, per operation.
        var allocations: Double
        /// `updateValue` calls that found the link's queue full (each retried after
        /// `readyToUpdateSubscribers`).
        var refused = 0
    }

    /// `count` Read Requests of the characteristic's value in all, one outstanding per
    /// central, as ATT allows: each central sends its next when it has its previous response.
    func reads(_ count: Int) async throws -> Result {
        let requests = readRequests()
        let (peer, controller, handles) = (self.peer, self.controller, self.handles)
        return try await measure(count, "\(count) Read Responses") {
            let first = handles.prefix(count)
            peer.expectReads(count, requests: requests, sent: first.count)
            controller.write(first.flatMap { requests[$0]! })
        }
    }

    /// `count` notifications per central of `value` through `updateValue`, as fast as the
    /// link's queue takes them, each call a notification to every central: a refusal waits
    /// for `readyToUpdateSubscribers` and sends the value again (with several centrals,
    /// again to all of them), until the centrals have seen `count` each in all.
    func notifications(_ count: Int, value: [UInt8]) async throws -> Result {
        let events = manager.events()
        let (manager, valueHandle, peer) = (self.manager, self.valueHandle, self.peer)
        let refused = Lock(0)
        let sender = Lock<Task<Void, Never>?>(nil)
        var result = try await measure(count * handles.count, "\(count * handles.count) notifications") {
            peer.expectNotifications(count * handles.count)
            sender.withLock { $0 = Task {
                var ready = events.makeAsyncIterator()
                while !peer.isDone {
                    if manager.updateValue(value, for: valueHandle) { continue }
                    refused.withLock { $0 += 1 }
                    while let event = await ready.next() {
                        if case .readyToUpdateSubscribers = event { break }
                    }
                }
            } }
        }
        // What was still queued when the centrals had their count goes out before the next run.
        await sender.withLock { $0 }?.value
        result.refused = refused.withLock { $0 }
        return result
    }

    private func measure(_ count: Int, _ what: String, start: @Sendable () -> Void) async throws -> Result {
        let controller = self.controller
        let before = (process: processCPUNanoseconds(), controller: controller.answeringCPUNanoseconds(), allocations: bareble_allocation_count())
        bareble_allocation_counter_enable(1)
        let clock = ContinuousClock.now
        start()
        let finished = await peer.finished(within: 120)
        let elapsed = ContinuousClock.now - clock
        bareble_allocation_counter_enable(0)
        let process = processCPUNanoseconds() - before.process
        let host = process - (controller.answeringCPUNanoseconds() - before.controller)
        guard finished else { throw BenchError("the central did not see \(what) within 120 s (\(peer.progress) seen)") }
        let operations = Double(count)
        return Result(
            perSecond: operations / (nanoseconds(elapsed) / 1e9), hostCPUMicroseconds: host / operations / 1000,
            processCPUMicroseconds: process / operations / 1000,
            allocations: Double(bareble_allocation_count() - before.allocations) / operations)
    }

    func finish() {
        central.close()
        controller.close()
        transport.close()
    }
}

/// The centrals, as the fake controller's answer to each ACL packet from the host (on the
/// controller's thread): setup requests wait for their response; in a read run each Read
/// Response is answered with that central's next Read Request until the run's count has
/// been sent; in a notification run Handle Value Notifications are counted.
final class FakeCentral: Sendable {
    private enum Mode { case setup, reads(requests: [UInt16: [UInt8]]), notifications }
    private struct State {
        var mode = Mode.setup
        var target = 0
        var count = 0
        /// Read Requests sent in this run.
        var sent = 0
        var response: CheckedContinuation<ATTPDU?, Never>?
        var done: CheckedContinuation<Bool, Never>?
        var isDone = false
    }
    private let state = Lock(State())

    var progress: Int { state.withLock { $0.count } }
    /// Whether the armed run has seen its count.
    var isDone: Bool { state.withLock { $0.isDone } }

    func answer(_ packet: ACLDataPacket) -> [[UInt8]] {
        // A B-frame header (4 octets) and the ATT opcode; every PDU here fits one packet.
        guard packet.data.count > 4 else { return [] }
        let opcode = packet.data[4]
        var response: (CheckedContinuation<ATTPDU?, Never>, ATTPDU?)?
        var done: CheckedContinuation<Bool, Never>?
        let next: [[UInt8]] = state.withLock { state in
            switch state.mode {
            case .setup:
                guard let frame = try? BasicFrame(decoding: packet.data), frame.channelID == .attributeProtocol,
                    let waiting = state.response.take()
                else { return [] }
                response = (waiting, try? ATTPDU(decoding: frame.payload))
                return []
            case .reads(let requests):
                guard opcode == ATTOpcode.readResponse.rawValue else { return [] }
                state.count += 1
                if state.count == state.target {
                    done = finish(&state)
                    return []
                }
                guard state.sent < state.target, let request = requests[packet.connectionHandle] else { return [] }
                state.sent += 1
                return [request]
            case .notifications:
                guard opcode == ATTOpcode.handleValueNotification.rawValue else { return [] }
                state.count += 1
                if state.count == state.target { done = finish(&state) }
                return []
            }
        }
        if let (continuation, pdu) = response { continuation.resume(returning: pdu) }
        done?.resume(returning: true)
        return next
    }

    private func finish(_ state: inout State) -> CheckedContinuation<Bool, Never>? {
        state.isDone = true
        state.mode = .setup
        return state.done.take()
    }

    /// Sends a setup request and waits (10 s at most) for the ATT PDU that answers it.
    func request(_ frame: [UInt8], on controller: StreamController) async -> ATTPDU? {
        let timeout = Task {
            do { try await Task.sleep(for: .seconds(10)) } catch { return }
            state.withLock { $0.response.take() }?.resume(returning: nil)
        }
        defer { timeout.cancel() }
        return await withCheckedContinuation { continuation in
            state.withLock { $0.response = continuation }
            controller.write(frame)
        }
    }

    /// Arms a read run of `count` responses; the caller sends the first `sent` requests.
    func expectReads(_ count: Int, requests: [UInt16: [UInt8]], sent: Int) { arm(.reads(requests: requests), count, sent: sent) }
    func expectNotifications(_ count: Int) { arm(.notifications, count) }

    private func arm(_ mode: Mode, _ count: Int, sent: Int = 0) {
        state.withLock { state in
            state.mode = mode
            state.target = count
            state.count = 0
            state.sent = sent
            state.isDone = false
        }
    }

    /// Waits until the armed run has seen its count; false after `seconds`.
    func finished(within seconds: Int) async -> Bool {
        let timeout = Task {
            do { try await Task.sleep(for: .seconds(seconds)) } catch { return }
            state.withLock { $0.done.take() }?.resume(returning: false)
        }
        defer { timeout.cancel() }
        return await withCheckedContinuation { continuation in
            let already = state.withLock { state in
                if state.isDone { return true }
                state.done = continuation
                return false
            }
            if already { continuation.resume(returning: true) }
        }
    }
}

/// Runs `body`, failing when it has not returned after `seconds`.
func within(seconds: Int, _ what: String, _ body: @escaping @Sendable () async -> Void) async throws {
    try await withThrowingTaskGroup(of: Bool.self) { group in
        group.addTask { await body(); return true }
        group.addTask { try await Task.sleep(for: .seconds(seconds)); return false }
        let first = try await group.next() ?? false
        group.cancelAll()
        guard first else { throw BenchError("no \(what) within \(seconds) s") }
    }
}
