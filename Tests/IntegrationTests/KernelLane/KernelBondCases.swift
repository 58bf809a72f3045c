import BluetoothCore
import Foundation
import HCITransport
import KernelHost
import Testing
import TestSupport

/// Bonds made through the kernel (hci-raw) outlive it, with no daemon: `bareble-central`
/// keeps the keys the kernel reports in its bond store and loads the store into the kernel
/// when it next attaches. Checked against the Bumble peer's own account: its
/// `pairing-complete` and `encryption-change` events.
enum KernelBondCases {
    static let transport = KernelToolCases.transport
    static let address = KernelToolCases.address + "/random"

    /// Pair with `read`; restart (the tool has exited; the adapter powered off and on
    /// through the management interface; the kernel's memory emptied, as a reboot would:
    /// a power cycle alone keeps its keys); a new `read --no-auto-pair` loads the store,
    /// and the link is encrypted with the stored key: the peer sees encryption and no
    /// pairing. After `bonds remove` (which unpairs in the kernel too) the next `read`
    /// pairs again (and is kept).
    ///
    /// The tools' default bond store, so the cases after this one find the store and the
    /// peer agreeing: a store whose key the peer no longer has makes every connect fail
    /// its encryption (and closing the socket then hit a Linux 6.1 bug once: list_del
    /// corruption in hci_chan_del from l2cap_sock_release).
    static func bondsSurviveRestart() async throws {
        let harness = try KernelGuest.radio.get()
        let up = try await KernelAdapterCases.runTool(["adapters", "--up", "0"])
        try #require(up.status == 0, "adapters --up 0: \(up.errors)")
        // Earlier cases paired hci0 with the peer and kept the bond: `bonds remove` drops it
        // from the store and from the kernel, and this case starts from neither.
        let cleared = try await KernelAdapterCases.runTool(["bonds", "remove", address])
        print("kernel guest: bonds remove before the case: exit \(cleared.status): \(cleared.output) \(cleared.errors)")
        // A key an earlier case left in the kernel without storing it.
        _ = try KernelManagement.unpair(index: 0, peer: KernelGuest.peripheral)
        try #require(!(try KernelManagement.unpair(index: 0, peer: KernelGuest.peripheral)), "the kernel still holds keys for the peer")
        try await harness.control("pairing peripheral io=no-input-no-output passkey=ask")

        // 1. Pairing through the kernel, kept in the store.
        let paired = try await KernelAdapterCases.runTool(["read", address, KernelGuest.encryptedUUID, "--json"] + transport)
        try #require(paired.status == 0, "read with auto-pairing: \(paired.errors)")
        try #require(paired.output.lowercased().contains("736563726574"), "the value \"secret\": \(paired.output)")
        try await harness.waitForEvent("pairing-complete", timeout: .seconds(5)) { $0["peer"] as? String == "peripheral" }
        let listed = try await KernelAdapterCases.runTool(["bonds", "list", "--json"])
        try #require(listed.status == 0, "bonds list: \(listed.errors)")
        let bond = try #require(Self.bonds(listed.output).first { $0["peer"] as? String == KernelToolCases.address }, "no bond in \(listed.output)")
        try #require((bond["peer_keys"] as? [String])?.contains("ltk/16") == true && bond["secure_connections"] as? Bool == true, "\(bond)")
        print("kernel guest: the kernel's pairing kept in the store: \(bond)")

        // 2. Restart: down and up through mgmt, then the kernel's memory emptied.
        let down = try await KernelAdapterCases.runTool(["adapters", "--down", "0"])
        try #require(down.status == 0, "adapters --down 0: \(down.errors)")
        try #require(try Adapters.list().first { $0.index == 0 }?.isUp == false, "hci0 still up after adapters --down 0")
        let upAgain = try await KernelAdapterCases.runTool(["adapters", "--up", "0"])
        try #require(upAgain.status == 0, "adapters --up 0: \(upAgain.errors)")
        let keptAcrossPower = try KernelManagement.unpair(index: 0, peer: KernelGuest.peripheral)
        try #require(!(try KernelManagement.unpair(index: 0, peer: KernelGuest.peripheral)), "the kernel still holds keys for the peer")
        print("kernel guest: after the power cycle the kernel \(keptAcrossPower ? "still held" : "had lost") its key; now it holds none")
        try await harness.control("pairing peripheral io=no-input-no-output passkey=ask")

        // 3. Started again: the store loaded, the link encrypted with its key, no pairing.
        let again = try await KernelAdapterCases.runTool(["read", address, KernelGuest.encryptedUUID, "--json", "--no-auto-pair"] + transport)
        try #require(again.status == 0, "read --no-auto-pair with the stored bond: \(again.errors)")
        try #require(again.output.lowercased().contains("736563726574"), "\(again.output)")
        let seen = Self.drain(harness, for: .seconds(4))
        let names = seen.filter { $0["peer"] as? String == "peripheral" }.compactMap { $0["event"] as? String }
        try #require(names.contains("encryption-change"), "the peer saw no encryption: \(names)")
        try #require(!names.contains("pairing-complete") && !names.contains("pairing-failed"), "the peer paired again: \(names)")
        print("kernel guest: reconnect with the stored key, the peer's events: \(names)")

        // 4. `bonds remove`: gone from the store and from the kernel; the next read pairs.
        let removed = try await KernelAdapterCases.runTool(["bonds", "remove", address])
        try #require(removed.status == 0, "bonds remove: \(removed.errors)")
        try #require(removed.output.contains("hci0's kernel forgot \(address)"), "\(removed.output)")
        try #require(!(try KernelManagement.unpair(index: 0, peer: KernelGuest.peripheral)), "the kernel kept keys after bonds remove")
        let repaired = try await KernelAdapterCases.runTool(["read", address, KernelGuest.encryptedUUID, "--json"] + transport)
        try #require(repaired.status == 0, "read after bonds remove: \(repaired.errors)")
        let complete = try await harness.waitForEvent("pairing-complete", timeout: .seconds(5)) { $0["peer"] as? String == "peripheral" }
        print("kernel guest: after bonds remove the kernel paired again: \(complete["method"] ?? "?")")
    }

    /// The bonds of every identity in `bonds list --json`.
    static func bonds(_ json: String) -> [[String: Any]] {
        let identities = ((try? JSONSerialization.jsonObject(with: Data(json.utf8))) as? [String: Any])?["identities"] as? [[String: Any]] ?? []
        return identities.flatMap { $0["bonds"] as? [[String: Any]] ?? [] }
    }

    /// Every event the radio reports for `duration`.
    static func drain(_ harness: RadioHarness, for duration: Duration) -> [[String: Any]] {
        let end = ContinuousClock.now + duration
        var events: [[String: Any]] = []
        while ContinuousClock.now < end {
            guard let line = try? harness.radio.nextLine(timeout: end - ContinuousClock.now) else { break }
            if let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] { events.append(object) }
        }
        return events
    }
}
