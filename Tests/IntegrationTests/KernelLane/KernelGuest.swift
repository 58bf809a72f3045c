import BluetoothCore
import Foundation
import HCITransport
import Testing
import TestSupport

/// The guest cases, in the order the guest runs them. Each one's body is in the
/// Kernel*Cases files; `hostCheck` runs on the host after the guest ended, on files the
/// guest left in the job folder (tshark is a host tool).
enum KernelGuestCase: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case adaptersListAndPower
    case rawScanFiltersAndRestores
    case rawSocketGATT
    case rawSocketSecurityMediumPairs
    case rawAdvertiseAndListen
    case rawToolExploreAndConnect
    case rawToolWriteReadSubscribe
    case rawToolReadPairsThroughKernel
    case rawSecurityHighAsksTheDelegate
    case rawToolPairTypesThePasskey
    case rawBondsSurviveRestart
    case rawPeripheralServesThroughKernel
    case userChannelGATT
    case userChannelHeldByAnother
    case monitorRecordsBTSnoop
    case monitorDeleteIndex
    case monitorTraceLive

    var testDescription: String { rawValue }

    var body: @Sendable () async throws -> Void {
        switch self {
        case .adaptersListAndPower: KernelAdapterCases.listAndPower
        case .rawScanFiltersAndRestores: KernelRawCases.scanFiltersAndRestores
        case .rawSocketGATT: KernelRawCases.socketGATT
        case .rawSocketSecurityMediumPairs: KernelRawCases.securityMediumPairs
        case .rawAdvertiseAndListen: KernelRawCases.advertiseAndListen
        case .rawToolExploreAndConnect: KernelToolCases.exploreAndConnect
        case .rawToolWriteReadSubscribe: KernelToolCases.writeReadSubscribe
        case .rawToolReadPairsThroughKernel: KernelToolCases.readPairsThroughKernel
        case .rawSecurityHighAsksTheDelegate: KernelSecurityCases.highAsksTheDelegate
        case .rawToolPairTypesThePasskey: KernelToolCases.pairTypesThePasskey
        case .rawBondsSurviveRestart: KernelBondCases.bondsSurviveRestart
        case .rawPeripheralServesThroughKernel: KernelPeripheralCases.servesThroughKernel
        case .userChannelGATT: KernelUserChannelCases.gatt
        case .userChannelHeldByAnother: KernelUserChannelCases.heldByAnother
        case .monitorRecordsBTSnoop: KernelMonitorCases.recordsBTSnoop
        case .monitorDeleteIndex: KernelMonitorCases.deleteIndex
        case .monitorTraceLive: KernelMonitorCases.traceLive
        }
    }

    var hostCheck: (@Sendable (_ jobDirectory: String) async throws -> Void)? {
        switch self {
        case .monitorRecordsBTSnoop: KernelMonitorCases.hostCheck
        default: nil
        }
    }
}

/// What the guest side shares: whether we are in the guest, the radio, result records.
enum KernelGuest {
    static let resultsFile = "results.jsonl"

    /// Set by the lane's guest init (tools/kernel-lane/lane.sh writes it into job.env).
    static var isInside: Bool { ProcessInfo.processInfo.environment["BAREBLE_KERNEL_GUEST"] == "1" }
    static var jobDirectory: String { ProcessInfo.processInfo.environment["BAREBLE_KERNEL_JOB"] ?? NSTemporaryDirectory() }

    /// Two controllers through /dev/vhci (hci0, hci1) and, on the same air, the HRM
    /// peripheral (with its encrypted characteristic) and the scanner peer. Started once.
    static let radio = Result {
        try RadioHarness(arguments: ["--vhci", "2", "--peripheral", "--scanner", "--lifetime", "660"], readyTimeout: .seconds(120))
    }

    static let peripheral = DeviceAddress(BluetoothAddress(0xC44B_4D00_0001), type: .random)
    static let hci0Address = BluetoothAddress(0xF00D_0000_0200)
    static let hci1Address = BluetoothAddress(0xF00D_0000_0201)
    static let readWriteUUID = "B4AE0003-7E57-4BA2-B1E0-00000000C0DE"
    static let notifyUUID = "B4AE0005-7E57-4BA2-B1E0-00000000C0DE"
    static let encryptedUUID = "B4AE0007-7E57-4BA2-B1E0-00000000C0DE"

    /// Runs one case and appends its outcome to the job folder's results file, which the
    /// host suite reads. Failures are thrown from `try #require`, so the guest's own run
    /// records them as issues too.
    static func run(_ testCase: KernelGuestCase) async throws {
        // BAREBLE_KERNEL_CASES=a,b runs only those (while working on one case; the host
        // then reports the others as missing).
        if let only = ProcessInfo.processInfo.environment["BAREBLE_KERNEL_CASES"], !only.isEmpty,
           !only.split(separator: ",").contains(Substring(testCase.rawValue)) {
            return
        }
        let started = ContinuousClock.now
        var failure: (any Error)?
        do {
            _ = try radio.get()
            // The database line comes once, right after the radio's ready line: take it
            // before any case skips past it while waiting for other events.
            _ = try await peerDatabase()
            try await testCase.body()
        } catch {
            failure = error
        }
        if failure != nil, let harness = try? radio.get() {
            // The radio's captures of hci0 and hci1 (btsnoop), for a look from the host.
            for name in (try? FileManager.default.contentsOfDirectory(atPath: harness.captureDirectory)) ?? [] {
                let target = jobDirectory + "/\(testCase.rawValue)-\(name)"
                try? FileManager.default.removeItem(atPath: target)
                try? FileManager.default.copyItem(atPath: harness.captureDirectory + "/" + name, toPath: target)
            }
        }
        let elapsed = ContinuousClock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let record: [String: Any] = [
            "case": testCase.rawValue, "passed": failure == nil,
            "message": failure.map { "\($0)" } ?? "", "seconds": (seconds * 10).rounded() / 10,
        ]
        let line = try JSONSerialization.data(withJSONObject: record) + Data("\n".utf8)
        let path = jobDirectory + "/" + resultsFile
        if !FileManager.default.fileExists(atPath: path) { _ = FileManager.default.createFile(atPath: path, contents: nil) }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: line)
        try handle.synchronize()
        try handle.close()
        print("kernel guest: \(testCase.rawValue) \(failure == nil ? "passed" : "FAILED: \(failure!)") in \(record["seconds"]!) s")
        if let failure { throw failure }
    }

    /// The peripheral's database as the radio printed it at start: (handle, UUID) of every
    /// service, include, characteristic and descriptor, the oracle a discovery must equal.
    static func peerDatabase() async throws -> [String] {
        if let cached = databaseCache.withLock({ $0 }) { return cached }
        let harness = try radio.get()
        let event = try await harness.waitForEvent("gatt-database", timeout: .seconds(60)) { $0["peer"] as? String == "peripheral" }
        let entries = entries(ofJSON: event["services"] as? [[String: Any]] ?? [], valueHandleKey: "value_handle")
        databaseHashCache.withLock { $0 = (event["database_hash"] as? String)?.lowercased() }
        databaseCache.withLock { $0 = entries }
        return entries
    }

    /// The Database Hash the peripheral stated with its database (hex, lower case).
    static func peerDatabaseHash() async throws -> String? {
        _ = try await peerDatabase()
        return databaseHashCache.withLock { $0 }
    }

    private static let databaseCache = Lock<[String]?>(nil)
    private static let databaseHashCache = Lock<String?>(nil)

    static func upper(_ value: Any?) -> String { "\(value ?? "")".uppercased() }

    /// Services as JSON objects (the radio's `gatt-database` event, `explore --json`) in
    /// the form of ``peerDatabase()``; the two name the value handle differently.
    static func entries(ofJSON services: [[String: Any]], valueHandleKey: String) -> [String] {
        var entries: [String] = []
        for service in services {
            entries.append("service \(service["handle"] ?? "")-\(service["end"] ?? "") \(upper(service["uuid"])) primary=\(service["primary"] as? Bool ?? false)")
            for include in service["includes"] as? [[String: Any]] ?? [] {
                entries.append("include \(include["handle"] ?? "") \(include["start"] ?? "")-\(include["end"] ?? "")")
            }
            for characteristic in service["characteristics"] as? [[String: Any]] ?? [] {
                entries.append("characteristic \(characteristic["handle"] ?? "") value \(characteristic[valueHandleKey] ?? "") \(upper(characteristic["uuid"])) properties \(characteristic["properties"] ?? "")")
                for descriptor in characteristic["descriptors"] as? [[String: Any]] ?? [] {
                    entries.append("descriptor \(descriptor["handle"] ?? "") \(upper(descriptor["uuid"]))")
                }
            }
        }
        return entries
    }

    /// The repository's root: where the test bundle was built (.build sits inside it).
    static func repositoryRoot() throws -> String {
        var directory = URL(fileURLWithPath: testBundlePath()).deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: directory.appendingPathComponent("tools/kernel-lane/lane.sh").path) {
            let up = directory.deletingLastPathComponent()
            if up.path == directory.path { throw LaneSetupError.noRepository }
            directory = up
        }
        return directory.path
    }

    static func testBundlePath() -> String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    enum LaneSetupError: Error { case noRepository }
}
