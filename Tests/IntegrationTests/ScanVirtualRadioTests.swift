import BluetoothCore
import Foundation
import HCI
import HCITransport
import Testing
import TestSupport

/// Foundation has a Scanner (a string parser) too.
typealias Scanner = HCI.Scanner

/// The scanner against the virtual radio's peers: the HRM peripheral (connectable,
/// scannable, with a scan response) and the non-connectable beacon.
@Suite(.serialized) struct ScanVirtualRadio {
    static let harness = Result { try RadioHarness(arguments: ["--tcp", "--peripheral", "--advertiser"]) }

    static let hrm = DeviceAddress(BluetoothAddress("C4:4B:4D:00:00:01")!, type: .random)
    static let beacon = DeviceAddress(BluetoothAddress("C4:4B:4D:00:00:02")!, type: .random)
    /// What the radio's HRM puts in its scan response: TX power 0, battery service data 87.
    static let hrmScanResponse: [UInt8] = [0x02, 0x0A, 0x00, 0x04, 0x16, 0x0F, 0x18, 0x57]

    /// A fresh controller on its own TCP connection, powered on.
    func makeScanner() async throws -> (Scanner, HCIController) {
        let harness = try Self.harness.get()
        let controller = HCIController(transport: try TCPTransport.connect(host: "127.0.0.1", port: harness.radio.tcpPort))
        try controller.start()
        try await controller.powerOn()
        return (Scanner(controller: controller), controller)
    }

    /// The first `count` advertisements the stream yields that satisfy `predicate`, or
    /// ``DeadlineExceeded`` (generous: these tests are not about latency, and a loaded CI
    /// machine's radio can lag).
    func collect(
        _ stream: AdvertisementStream, count: Int = 1,
        where predicate: @escaping @Sendable (Advertisement) -> Bool = { _ in true }
    ) async throws -> [Advertisement] {
        try await withDeadline("\(count) advertisement(s)") {
            var found: [Advertisement] = []
            for try await advertisement in stream where predicate(advertisement) {
                found.append(advertisement)
                if found.count == count { break }
            }
            return found
        }
    }

    /// The name is in the raw bytes whatever the codec's state; through the codec too once
    /// it parses names.
    func expectName(_ advertisement: Advertisement, _ name: String) {
        let bytes = advertisement.advertisingData.bytes
        let structure: [UInt8] = [UInt8(name.utf8.count + 1), 0x09] + Array(name.utf8)
        #expect(bytes.indices.contains { bytes[$0...].starts(with: structure) }, "\(name) in \(Hex.string(bytes))")
        if let parsed = advertisement.localName { #expect(parsed == name) }
    }

    @Test(arguments: [nil, false] as [Bool?])
    func passiveScanFindsThePeripheralWithoutAScanResponse(extended: Bool?) async throws {
        let (scanner, controller) = try await makeScanner()
        defer { controller.close() }
        let parameters = try ScanParameters(active: false, useExtendedCommands: extended)
        let found = try await collect(scanner.advertisements(matching: ScanFilter(addresses: [Self.hrm]), parameters: parameters))
        let hrm = try #require(found.first)
        expectName(hrm, "BareBLE-HRM")
        #expect(hrm.eventType == [.legacy, .connectable, .scannable])
        #expect(hrm.scanResponseData == nil)
        #expect(hrm.rssi != nil)
        #expect(scanner.statistics.mergedScanResponses == 0)
        #expect(scanner.statistics.malformedReports == 0)
    }

    @Test(arguments: [nil, false] as [Bool?])
    func activeScanMergesThePeripheralsScanResponse(extended: Bool?) async throws {
        let (scanner, controller) = try await makeScanner()
        defer { controller.close() }
        let parameters = try ScanParameters(active: true, useExtendedCommands: extended)
        let found = try await collect(scanner.advertisements(matching: ScanFilter(addresses: [Self.hrm]), parameters: parameters), count: 3)
        // Every one is whole: the response arrives right after its advertisement.
        for hrm in found {
            expectName(hrm, "BareBLE-HRM")
            #expect(hrm.eventType == [.legacy, .connectable, .scannable, .scanResponse])
            #expect(hrm.scanResponseData?.bytes == Self.hrmScanResponse)
        }
        #expect(scanner.statistics.mergedScanResponses >= 3)
    }

    @Test(arguments: [nil, false] as [Bool?])
    func theBeaconIsFoundAndIsNotConnectable(extended: Bool?) async throws {
        let (scanner, controller) = try await makeScanner()
        defer { controller.close() }
        let parameters = try ScanParameters(active: true, useExtendedCommands: extended)
        let found = try await collect(scanner.advertisements(matching: ScanFilter(addresses: [Self.beacon]), parameters: parameters))
        let beacon = try #require(found.first)
        expectName(beacon, "BareBLE-Beacon")
        #expect(!beacon.isConnectable)
        #expect(beacon.eventType == [.legacy])
        #expect(beacon.scanResponseData == nil)
    }

    @Test func rssiChangesShowUpUnderTheRSSIPolicy() async throws {
        let harness = try Self.harness.get()
        let (scanner, controller) = try await makeScanner()
        defer { controller.close() }
        defer { try? harness.controlBlocking("rssi advertiser -50") }
        // Only RSSI moves matter here: a long interval keeps repeats out.
        let filter = ScanFilter(addresses: [Self.beacon], duplicates: .whenRSSIChanges(byMoreThan: 5, orEvery: .seconds(60)))
        let stream = scanner.advertisements(matching: filter)
        let seen = Lock<[Int8?]>([])
        let reader = Task {
            for try await advertisement in stream {
                seen.withLock { $0.append(advertisement.rssi) }
                if advertisement.rssi == -40 { return }
            }
        }
        let first = try await collect(scanner.advertisements(matching: ScanFilter(addresses: [Self.beacon])))
        #expect(first.first?.rssi == -50)
        try await harness.control("rssi advertiser -70")
        _ = try await collect(scanner.advertisements(matching: ScanFilter(addresses: [Self.beacon])), where: { $0.rssi == -70 })
        try await harness.control("rssi advertiser -40")
        try await withDeadline("the report at -40 dBm") { try await reader.value }
        // Each level once: the many repeats at the same RSSI were held back.
        #expect(seen.withLock { $0 } == [-50, -70, -40])
    }

    @Test func scanningStopsWhenTheLastConsumerLeaves() async throws {
        let harness = try Self.harness.get()
        let path = TestScratch.root + "/scan-stop.btsnoop"
        let base = try TransportSpec(parsing: "tcp:127.0.0.1:\(harness.radio.tcpPort)").open()
        let controller = HCIController(transport: CapturingTransport(base, writer: try BTSnoopWriter(path: path, datalink: .h4)))
        try controller.start()
        try await controller.powerOn()
        let scanner = Scanner(controller: controller)
        let received = Lock(0)
        let session = try await scanner.scan { _ in received.withLock { $0 += 1 } }
        _ = try await collect(scanner.advertisements(), count: 5)
        await session.stop()
        controller.close()
        #expect(received.withLock { $0 } > 0)
        let commands = try BTSnoopFile(contentsOf: path).records.compactMap(\.packet).filter { $0.type == .command }
        let enables = commands.filter { $0.bytes.starts(with: [0x42, 0x20]) }
        #expect(enables.count == 2, "one enable, one disable: the stream and the session share one scan")
        #expect(enables.last?.bytes.dropFirst(3).first == 0)
        let report = try await Tshark.check(path)
        #expect(report.malformed.isEmpty, "tshark: \(report.malformed)")
    }
}
