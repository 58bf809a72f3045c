import ATT
import BluetoothCore
import Foundation
import GATT
import HCI
import HCITransport
import KernelHost
import L2CAP
import Testing
import TestSupport

/// hci-raw:N, the kernel-assisted mode, in the lane's guest: scanning and advertising with
/// HCI commands beside the kernel, ATT and GATT over the kernel's L2CAP LE socket.
enum KernelRawCases {
    static let scanTimeout: Duration = .seconds(30)

    /// A raw channel on an up hci0 with the narrow filter: the scan finds the Bumble
    /// peripheral, only the filtered packet kinds arrive, and closing while still scanning
    /// leaves the controller not scanning (checked through a second, unfiltered raw socket).
    static func scanFiltersAndRestores() async throws {
        try Adapters.bringUp(index: 0)
        let transport = try HCISocketTransport.openRawChannel(index: 0)
        let seen = Lock<[String]>([])
        let counting = CountingTransport(transport) { packet in
            guard !HCIRawFilter.hostSideLE.passes(type: packet.type.rawValue, eventCode: packet.type == .event ? packet.bytes.first : nil) else { return }
            seen.withLock { $0.append("\(packet.type) \(Hex.string(Array(packet.bytes.prefix(2))))") }
        }
        let controller = HCIController(transport: counting)
        try controller.start()
        let info = try await controller.powerOn()
        try #require(info.address == KernelGuest.hci0Address, "hci0's address through the raw channel: \(info.address)")
        let scanner = Scanner(controller: controller)
        let (found, continuation) = AsyncStream.makeStream(of: Advertisement.self)
        let session = try await scanner.scan(matching: ScanFilter(), parameters: ScanParameters()) { advertisement in
            if advertisement.address == KernelGuest.peripheral { continuation.yield(advertisement) }
        }
        let first = try await firstElement(of: found, within: scanTimeout, waitingFor: "the peripheral's advertisement on hci-raw:0")
        try #require(first.localName == "BareBLE-HRM", "name: \(String(describing: first.localName))")
        try #require(!controller.sharedStateChanges.isEmpty, "scanning is recorded as ours to undo")
        _ = session
        // Closing without stopping: close() itself must switch the scan off again.
        controller.close()
        try #require(seen.withLock { $0 }.isEmpty, "packets outside the filter reached us: \(seen.withLock { $0 })")

        // An unfiltered listener: no advertising report may arrive once we let go.
        let listener = try HCISocketTransport.openRawChannel(index: 0, filter: .everything)
        let reports = Lock(0)
        try listener.start(receive: { packet in
            if packet.type == .event, packet.bytes.first == 0x3E, let sub = packet.bytes.dropFirst(2).first, sub == 0x02 || sub == 0x0D {
                reports.withLock { $0 += 1 }
            }
        }, closed: { _ in })
        // The kernel queues our disable command; give it a moment to reach the controller,
        // then count over a window where a scanning controller reports every 20-40 ms.
        try await Task.sleep(for: .seconds(1))
        reports.withLock { $0 = 0 }
        try await Task.sleep(for: .seconds(2))
        listener.close()
        try #require(reports.withLock { $0 } == 0, "the controller still scans after close: \(reports.withLock { $0 }) reports in 2 s")
    }

    /// ATT and GATT over the kernel's L2CAP LE socket (CID 4): connect (random address),
    /// the MTU the kernel reports, full discovery equal to the peer's database, write and
    /// read back, a subscription that receives the peer's notification.
    static func socketGATT() async throws {
        try Adapters.bringUp(index: 0)
        let socket = try await KernelL2CAPSocket.connect(to: KernelGuest.peripheral, adapter: 0, security: .low, timeout: .seconds(30))
        defer { socket.close() }
        try #require(socket.securityLevel == .low)
        let receiveMTU = try #require(socket.receiveMTU, "BT_RCVMTU")
        let bearer = KernelSocketBearer(socket: socket)
        try #require(bearer.maximumMTU != nil, "the kernel reported the socket's MTU (receive \(receiveMTU), send \(String(describing: socket.sendMTU)))")
        let att = ATTClient(bearer: bearer)
        let mtu = try await att.exchangeMTU()
        try #require(mtu > 23 && mtu <= bearer.maximumMTU!, "ATT_MTU \(mtu) within the kernel's limit \(bearer.maximumMTU!)")
        print("kernel guest: BT_RCVMTU \(receiveMTU), BT_SNDMTU \(socket.sendMTU.map(String.init) ?? "none"), ATT_MTU after Exchange MTU \(mtu)")
        let gatt = GATTClient(att: att)
        try await exploreWriteAndSubscribe(gatt)
        att.close()
    }

    /// The shared GATT conversation of the socket bearer and the user channel: discovery
    /// equal to what the peer defines, write and read-back, a notification received.
    static func exploreWriteAndSubscribe(_ gatt: GATTClient) async throws {
        let database = try await gatt.discover()
        let expected = try await KernelGuest.peerDatabase()
        let discovered = entries(of: database)
        try #require(discovered == expected, "discovery differs from the peer's database:\nmissing \(expected.filter { !discovered.contains($0) })\nextra \(discovered.filter { !expected.contains($0) })")

        let readWrite = try #require(database.characteristic(BluetoothUUID(KernelGuest.readWriteUUID)!))
        let written = Array("kernel \(UInt16.random(in: 0...9999))".utf8)
        try await gatt.writeValue(readWrite.valueHandle, value: written)
        try #require(try await gatt.readValue(readWrite.valueHandle) == written)

        let notify = try #require(database.characteristic(BluetoothUUID(KernelGuest.notifyUUID)!))
        let values = try await gatt.subscribe(to: notify)
        let harness = try KernelGuest.radio.get()
        try await harness.waitForEvent("subscription", timeout: .seconds(30)) { ($0["characteristic"] as? String)?.uppercased() == KernelGuest.notifyUUID }
        try await harness.control("notify peripheral \(KernelGuest.notifyUUID) 2a2b")
        let value = try await firstElement(of: values, within: .seconds(30), waitingFor: "the peer's notification")
        try #require(value == [0x2A, 0x2B])
    }

    /// Security medium on the kernel socket: the encrypted characteristic fails on an
    /// unencrypted link, the kernel pairs when asked (BT_SECURITY), the read succeeds.
    static func securityMediumPairs() async throws {
        // The kernel's SMP exists only on an adapter powered on through management (after
        // its first bring-up has finished: HCIDEVUP waits for that).
        try Adapters.bringUp(index: 0)
        try KernelManagement.powerOnManaged(index: 0)
        let socket = try await KernelL2CAPSocket.connect(to: KernelGuest.peripheral, adapter: 0, security: .low, timeout: .seconds(30))
        defer { socket.close() }
        let att = ATTClient(bearer: KernelSocketBearer(socket: socket))
        let gatt = GATTClient(att: att)
        let database = try await gatt.discover()
        let encrypted = try #require(database.characteristic(BluetoothUUID(KernelGuest.encryptedUUID)!))
        do {
            _ = try await gatt.readValue(encrypted.valueHandle)
            Issue.record("the encrypted characteristic was readable on an unencrypted link")
            throw KernelCaseFailure("read succeeded without encryption")
        } catch let error as GATTError {
            try #require(error.errorCode == .insufficientEncryption || error.errorCode == .insufficientAuthentication, "\(error)")
        }
        try await socket.raiseSecurity(to: .medium, timeout: .seconds(30))
        try #require(socket.securityLevel.map { $0.rawValue >= KernelL2CAPSocket.SecurityLevel.medium.rawValue } == true)
        // The peer serves this value only on an encrypted link: reading it proves the pairing.
        try #require(try await gatt.readValue(encrypted.valueHandle) == Array("secret".utf8))
        att.close()
    }

    /// Advertising on the raw channel beside the kernel, and the listening ATT socket:
    /// hci1's kernel connects to hci0's advertisement, hci0's listener accepts the ATT
    /// channel, a PDU crosses both ways; closing restores hci0's advertising state.
    static func advertiseAndListen() async throws {
        try Adapters.bringUp(index: 0)
        try Adapters.bringUp(index: 1)
        let listener = try KernelL2CAPListener(adapter: 0)
        let controller = HCIController(transport: try HCISocketTransport.openRawChannel(index: 0))
        try controller.start()
        let info = try await controller.powerOn()
        let advertiser = Advertiser(controller: controller)
        let name: [UInt8] = [0x02, 0x01, 0x06, 0x0B, 0x09] + Array("BareBLE-K0".utf8)
        _ = try await advertiser.start(.init(kind: .connectableUndirected, interval: .milliseconds(30), pduFormat: .legacy), data: AdvertisingData(name))
        try #require(!controller.sharedStateChanges.isEmpty)
        // The independent scanner peer hears it.
        let harness = try KernelGuest.radio.get()
        try await harness.waitForEvent("heard", timeout: .seconds(30)) { ($0["address"] as? String)?.hasPrefix(info.address.description) == true }

        async let accepted = listener.accept(timeout: .seconds(40))
        let central = try await KernelL2CAPSocket.connect(to: DeviceAddress(info.address, type: .public), adapter: 1, timeout: .seconds(40))
        defer { central.close() }
        let peripheral = try await accepted
        defer { peripheral.close() }
        try #require(peripheral.peer.address == KernelGuest.hci1Address, "accepted from \(peripheral.peer)")
        let received = AsyncStream.makeStream(of: [UInt8].self)
        try peripheral.start(receive: { received.continuation.yield($0) }, closed: { _ in received.continuation.finish() })
        // An ATT Read Request for handle 1 (what a client would send first).
        try central.send([0x0A, 0x01, 0x00])
        let pdu = try await firstElement(of: received.stream, within: .seconds(20), waitingFor: "the PDU on the accepted socket")
        try #require(pdu == [0x0A, 0x01, 0x00])
        // The connection ended advertising in the controller; whatever is left is undone.
        try await controller.restoreSharedState()
        try #require(controller.sharedStateChanges.isEmpty, "left switched on: \(controller.sharedStateChanges)")
        controller.close()
    }

    static func entries(of database: GATTDatabase) -> [String] {
        var entries: [String] = []
        for service in database.services {
            entries.append("service \(service.handles.lowerBound)-\(service.handles.upperBound) \(service.uuid.description.uppercased()) primary=\(service.isPrimary)")
            for include in service.includes {
                entries.append("include \(include.handle) \(include.serviceHandles.lowerBound)-\(include.serviceHandles.upperBound)")
            }
            for characteristic in service.characteristics {
                entries.append("characteristic \(characteristic.handle) value \(characteristic.valueHandle) \(characteristic.uuid.description.uppercased()) properties \(characteristic.properties.rawValue)")
                for descriptor in characteristic.descriptors {
                    entries.append("descriptor \(descriptor.handle) \(descriptor.uuid.description.uppercased())")
                }
            }
        }
        return entries
    }
}

struct KernelCaseFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Runs `body`, then `cleanup` whether it threw or not (an async `defer`), then rethrows
/// the body's error.
func withCleanup(_ body: () async throws -> Void, cleanup: () async throws -> Void) async throws {
    do {
        try await body()
    } catch {
        try? await cleanup()
        throw error
    }
    try await cleanup()
}

/// The first element of `stream`, or a typed failure after `timeout`.
func firstElement<Element: Sendable>(
    of stream: AsyncStream<Element>, within timeout: Duration, waitingFor what: String
) async throws -> Element {
    try await withThrowingTaskGroup(of: Element?.self) { group in
        group.addTask {
            for await element in stream { return element }
            return nil
        }
        group.addTask {
            try await Task.sleep(for: timeout)
            throw KernelCaseFailure("timed out after \(timeout) waiting for \(what)")
        }
        defer { group.cancelAll() }
        guard let element = try await group.next() ?? nil else { throw KernelCaseFailure("the stream ended before \(what)") }
        return element
    }
}

/// Wraps a transport and shows every received packet to `observe` first.
final class CountingTransport: HCITransport {
    let base: any HCITransport
    let observe: @Sendable (HCIPacket) -> Void

    init(_ base: any HCITransport, observe: @escaping @Sendable (HCIPacket) -> Void) {
        self.base = base
        self.observe = observe
    }

    var name: String { base.name }
    var kernelAdapter: Int? { base.kernelAdapter }

    func start(receive: @escaping @Sendable (HCIPacket) -> Void, closed: @escaping @Sendable (TransportError?) -> Void) throws(TransportError) {
        let observe = self.observe
        try base.start(receive: { packet in
            observe(packet)
            receive(packet)
        }, closed: closed)
    }

    func send(_ packet: HCIPacket) throws(TransportError) { try base.send(packet) }
    func close() { base.close() }
}
