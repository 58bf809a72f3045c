import BareBLE
import BluetoothCore
import Foundation
import HCITransport
import KernelHost
import SMP
import Testing
import TestSupport

/// Security `high` beside the kernel, in the lane's guest: the facade on hci-raw:0 with a
/// keyboard-and-display policy and a pairing delegate. A read the peer refuses raises
/// BT_SECURITY high; the kernel pairs with MITM protection and asks our agent, which asks
/// the delegate, which answers from what the Bumble peer shows (its own events): numeric
/// comparison, passkey entry, and a wrong passkey that must fail.
enum KernelSecurityCases {
    static func highAsksTheDelegate() async throws {
        try Adapters.bringUp(index: 0)
        try KernelManagement.powerOnManaged(index: 0)
        let harness = try KernelGuest.radio.get()
        // The peer's settings back only at the end: waiting for the ack skips every event
        // before it.
        try await withCleanup { try await pairings(harness) } cleanup: {
            try await harness.control("pairing peripheral io=no-input-no-output passkey=ask")
        }
    }

    static func pairings(_ harness: RadioHarness) async throws {
        // Numeric comparison: both sides can show six digits and say yes or no.
        try await harness.control("pairing peripheral io=display-yesno mitm=1 sc=1 confirm=1 passkey=ask")
        let comparing = PeerUser(harness: harness)
        try await pairsAuthenticated(with: comparing, method: "numeric-comparison", harness)
        try #require(comparing.answered.withLock { $0 }.count == 1, "the delegate was asked \(comparing.answered.withLock { $0 })")

        // Passkey entry: the peer displays, our user types what it shows.
        let passkey = UInt32.random(in: 100_000...999_999)
        try await harness.control("pairing peripheral io=display-only mitm=1 sc=1 passkey=\(passkey)")
        let typing = PeerUser(harness: harness)
        try await pairsAuthenticated(with: typing, method: "passkey", harness)
        try #require(typing.answered.withLock { $0 } == ["passkey \(passkey)"], "\(typing.answered.withLock { $0 })")

        // A wrong passkey: the kernel's pairing fails and the read says so.
        let wrong = PeerUser(harness: harness, wrongPasskey: true)
        let refused = try await readEncrypted(with: wrong)
        guard case let .kernelSocket(error)? = refused, case .securityFailed = error else {
            throw KernelCaseFailure("a wrong passkey: expected the kernel's pairing to fail, got \(refused.map { "\($0)" } ?? "the value")")
        }
        print("kernel guest: security high over hci-raw:0: numeric comparison and passkey entry paired (authenticated), a wrong passkey failed: \(error)")
    }

    /// The read succeeds with `user` answering, and the peer says it paired with
    /// `method` and authenticated (MITM-protected) keys.
    static func pairsAuthenticated(with user: PeerUser, method: String, _ harness: RadioHarness) async throws {
        let failure = try await readEncrypted(with: user)
        try #require(failure == nil, "\(method): \(failure!)")
        let complete = try await harness.waitForEvent("pairing-complete", timeout: .seconds(5)) { $0["peer"] as? String == "peripheral" }
        try #require(complete["method"] as? String == method, "\(complete)")
        try #require((complete["keys"] as? [String: Any])?["authenticated"] as? Bool == true, "\(complete)")
    }

    /// Connects a fresh Central on hci-raw:0 with `user` as delegate, with no kernel key
    /// for the peer, and reads the encrypted characteristic: nil outcome when it read
    /// "secret", else the error.
    static func readEncrypted(with user: PeerUser) async throws -> PeripheralError? {
        _ = try KernelManagement.unpair(index: 0, peer: KernelGuest.peripheral, disconnect: true)
        let policy = SecurityPolicy(pairing: PairingConfiguration(ioCapability: .keyboardDisplay, mitm: true), delegate: user)
        let central = try Central.open(.hciRaw(index: 0), security: policy)
        defer { central.close() }
        try await central.powerOn()
        let peripheral = try await central.connect(to: KernelGuest.peripheral, timeout: .seconds(30))
        do {
            try await peripheral.discoverServices()
            let encrypted = try #require(peripheral.characteristic(BluetoothUUID(KernelGuest.encryptedUUID)!))
            let value = try await peripheral.readValue(for: encrypted)
            try #require(value == Array("secret".utf8))
            try #require(peripheral.isEncrypted)
            try await peripheral.disconnect()
            return nil
        } catch let error as PeripheralError {
            try? await peripheral.disconnect()
            return error
        }
    }
}

/// The person at our end, who reads what the Bumble peer shows from its event log.
final class PeerUser: PairingDelegate {
    let harness: RadioHarness
    let wrongPasskey: Bool
    /// What the kernel asked and we answered, in order.
    let answered = Lock<[String]>([])

    init(harness: RadioHarness, wrongPasskey: Bool = false) {
        self.harness = harness
        self.wrongPasskey = wrongPasskey
    }

    func confirmNumericComparison(_ value: UInt32, peer: DeviceAddress) async -> Bool {
        let shown = try? await harness.waitForEvent("pairing-compare", timeout: .seconds(10)) { $0["peer"] as? String == "peripheral" }
        let same = (shown?["number"] as? Int).map { UInt32($0) == value } ?? false
        answered.withLock { $0.append("compare \(value) \(same)") }
        return same
    }

    func enterPasskey(peer: DeviceAddress) async -> UInt32? {
        guard let shown = try? await harness.waitForEvent("pairing-display", timeout: .seconds(10), where: { $0["peer"] as? String == "peripheral" }),
              let number = shown["number"] as? Int
        else { return nil }
        let typed = wrongPasskey ? UInt32((number + 1) % 1_000_000) : UInt32(number)
        answered.withLock { $0.append("passkey \(typed)") }
        return typed
    }

    func displayPasskey(_ passkey: UInt32, peer: DeviceAddress) async {
        answered.withLock { $0.append("display \(passkey)") }
    }
}
