import BluetoothCore
@testable import HCI
import HCITransport
import TestSupport

/// A FakeChip that also scans: answers the scan commands with success, and lists the
/// extended ones as supported only when asked to.
struct ScanChip: Sendable {
    var chip = FakeChip()
    /// Status for LE Set (Extended) Scan Enable with enable = 1.
    var enableStatus: HCIErrorCode = .success

    init(extended: Bool, coded: Bool = false) {
        chip.supported += [LESetScanParameters.self, LESetScanEnable.self]
        if extended { chip.supported += [LESetExtendedScanParameters.self, LESetExtendedScanEnable.self] }
        if coded { chip.leFeatures.insert(.leCodedPHY) }
    }

    static let scanOpcodes: Set<HCIOpcode> = [
        LESetScanParameters.opcode, LESetScanEnable.opcode,
        LESetExtendedScanParameters.opcode, LESetExtendedScanEnable.opcode,
    ]

    func answer(_ packet: HCIPacket) -> [HCIPacket] {
        guard let opcode = opcodes([packet]).first, Self.scanOpcodes.contains(opcode) else { return chip.answer(packet) }
        let enabling = (opcode == LESetScanEnable.opcode || opcode == LESetExtendedScanEnable.opcode) && packet.bytes.count > 3 && packet.bytes[3] == 1
        let reply = chip.complete(opcode, [])
        return [enabling ? reply.withStatus(enableStatus) : reply]
    }
}

/// A scanner on a powered-on scripted controller, with a clock the test sets.
struct ScanRig {
    let controller: HCIController
    let transport: ScriptedTransport
    let scanner: Scanner
    let clock: TestClock

    init(_ chip: ScanChip = ScanChip(extended: true), logs: LogCapture? = nil) async throws {
        transport = ScriptedTransport { chip.answer($0) }
        controller = if let logs { HCIController(transport: transport, logger: logs.logger(HCIController.defaultLogLabel)) } else { HCIController(transport: transport) }
        try controller.start()
        try await controller.powerOn()
        let clock = TestClock()
        self.clock = clock
        scanner = Scanner(controller: controller, now: { clock.now })
    }

    /// The scan commands sent so far, decoded.
    var scanCommands: [String] {
        transport.sent.compactMap(describeScanCommand)
    }

    /// Delivers events as the controller would, and waits until they were handled.
    func inject(_ events: [LEMetaEvent]) async {
        transport.inject(events.map { HCIPacket(.event, HCIEvent.le($0).encode()) })
        await transport.drain()
    }

    func inject(_ event: LEMetaEvent) async { await inject([event]) }
}

/// A compact text for each scan command, so tests compare whole sequences at a glance.
func describeScanCommand(_ packet: HCIPacket) -> String? {
    guard packet.type == .command, packet.bytes.count >= 3 else { return nil }
    var reader = ByteReader(Array(packet.bytes.dropFirst(3)))
    switch opcodes([packet]).first {
    case LESetScanParameters.opcode?:
        guard let command = try? LESetScanParameters(parameters: &reader) else { return "bad" }
        return "params \(command.leScanType) \(command.leScanInterval)/\(command.leScanWindow) policy \(command.scanningFilterPolicy.rawValue)"
    case LESetScanEnable.opcode?:
        guard let command = try? LESetScanEnable(parameters: &reader) else { return "bad" }
        return "\(command.enable ? "enable" : "disable") dup \(command.filterDuplicates ? 1 : 0)"
    case LESetExtendedScanParameters.opcode?:
        guard let command = try? LESetExtendedScanParameters(parameters: &reader) else { return "bad" }
        let phys = command.phyParameters.map { "\($0.scanType) \($0.scanInterval)/\($0.scanWindow)" }.joined(separator: ", ")
        return "ext params phys \(command.scanningPHYs.rawValue) [\(phys)] policy \(command.scanningFilterPolicy.rawValue)"
    case LESetExtendedScanEnable.opcode?:
        guard let command = try? LESetExtendedScanEnable(parameters: &reader) else { return "bad" }
        return "ext \(command.enable ? "enable" : "disable") dup \(command.filterDuplicates.rawValue)"
    default:
        return nil
    }
}

final class TestClock: Sendable {
    private let value = Lock<UInt64>(1_000_000_000)
    var now: UInt64 { value.withLock { $0 } }
    func advance(milliseconds: UInt64) { value.withLock { $0 += milliseconds * 1_000_000 } }
}

/// Collects what a handler receives.
final class Collector: Sendable {
    private let items = Lock<[Advertisement]>([])
    var advertisements: [Advertisement] { items.withLock { $0 } }
    var handler: Scanner.Handler { { advertisement in self.items.withLock { $0.append(advertisement) } } }
    func clear() { items.withLock { $0.removeAll() } }
}

// Report builders.
let hrmAddress = BluetoothAddress(0xC44B_4D00_0001)
let beaconAddress = BluetoothAddress(0xC44B_4D00_0002)

func legacy(_ type: LEAdvertisingReport.EventType, _ address: BluetoothAddress = hrmAddress, data: [UInt8] = [2, 1, 6], rssi: Int8 = -50) -> LEMetaEvent {
    .advertisingReport(LEAdvertisingReport(reports: [.init(eventType: type, addressType: .random, address: address, data: data, rssi: rssi)]))
}

func extendedReport(
    _ bits: LEExtendedAdvertisingReport.EventType, _ address: BluetoothAddress = hrmAddress, sid: UInt8 = 0xFF,
    status: LEExtendedAdvertisingReport.EventType.DataStatus = .complete, data: [UInt8] = [2, 1, 6], rssi: Int8 = -50,
    secondaryPHY: LEPHY = .none, txPower: Int8 = 127
) -> LEExtendedAdvertisingReport.Report {
    var type = bits
    type.dataStatus = status
    return .init(
        eventType: type, addressType: .random, address: address, primaryPHY: .le1M, secondaryPHY: secondaryPHY,
        advertisingSID: sid, txPower: txPower, rssi: rssi, periodicAdvertisingInterval: 0,
        directAddressType: .public, directAddress: BluetoothAddress(0), data: data
    )
}

func extended(_ reports: LEExtendedAdvertisingReport.Report...) -> LEMetaEvent {
    .extendedAdvertisingReport(LEExtendedAdvertisingReport(reports: reports))
}

let adInd: LEExtendedAdvertisingReport.EventType = [.legacy, .connectable, .scannable]
let adScanResponse: LEExtendedAdvertisingReport.EventType = [.legacy, .connectable, .scannable, .scanResponse]
