import Foundation
import HCITransport
import KernelHost
import Testing
import TestSupport

/// The facade and the tools over hci-raw:N, in the lane's guest: the built
/// `bareble-central`, unchanged, with `--transport hci-raw:0`, so its GATT client runs
/// over the kernel's L2CAP ATT socket and the kernel makes the link and pairs. What it
/// shows is checked against the Bumble peripheral's own account (its database, its
/// write, subscription and pairing events), not against our output.
enum KernelToolCases {
    static let address = "C4:4B:4D:00:00:01"
    static let transport = ["--transport", "hci-raw:0"]

    /// `connect` (the address type found by scanning on the raw channel) says the kernel
    /// made the link; `explore --json` is the peer's database, handle for handle.
    static func exploreAndConnect() async throws {
        try Adapters.bringUp(index: 0)
        let connect = try await KernelAdapterCases.runTool(["connect", address] + transport)
        try #require(connect.status == 0, "connect: \(connect.errors)")
        try #require(connect.output.contains("connected to \(address)/random through the kernel's L2CAP socket (hci-raw)"), "\(connect.output)")
        try #require(connect.output.contains("ATT MTU              517"), "the exchange within the kernel's 672: \(connect.output)")
        try #require(connect.output.contains("disconnected: "), "\(connect.output)")

        let explore = try await KernelAdapterCases.runTool(["explore", address + "/random", "--json", "--no-auto-pair"] + transport)
        try #require(explore.status == 0, "explore: \(explore.errors)")
        let explored = try #require(try JSONSerialization.jsonObject(with: Data(explore.output.utf8)) as? [String: Any], "\(explore.output)")
        try #require(explored["address"] as? String == address && explored["addressType"] as? String == "random", "\(explored)")
        try #require(explored["mtu"] as? Int == 517, "mtu \(explored["mtu"] ?? "none")")
        try #require(explored["name"] as? String == "BareBLE-HRM")
        let hash = try await KernelGuest.peerDatabaseHash()
        try #require(hash != nil && (explored["databaseHash"] as? String)?.lowercased() == hash, "hash \(explored["databaseHash"] ?? "none"), the peer's \(hash ?? "none")")

        let expected = try await KernelGuest.peerDatabase()
        let services = try #require(explored["services"] as? [[String: Any]])
        let ours = KernelGuest.entries(ofJSON: services, valueHandleKey: "valueHandle")
        try #require(ours == expected, "explore differs from the peer's database:\nmissing \(expected.filter { !ours.contains($0) })\nextra \(ours.filter { !expected.contains($0) })")
        // Values: the encrypted one refused with the tool's advice (--no-auto-pair; 0x05 from
        // a peer this adapter never paired with, 0x0F once an earlier case paired), the
        // constant ones as the peer defines them.
        let characteristics = services.flatMap { $0["characteristics"] as? [[String: Any]] ?? [] }
        let encrypted = try #require(characteristics.first { ($0["uuid"] as? String)?.uppercased() == KernelGuest.encryptedUUID })
        try #require(encrypted["value"] is NSNull && [0x05, 0x0F].contains(encrypted["errorCode"] as? Int ?? 0), "\(encrypted)")
        try #require((encrypted["error"] as? String)?.contains("pair first") == true, "\(encrypted)")
        let battery = try #require(characteristics.first { $0["uuid"] as? String == "2A19" })
        try #require(battery["decoded"] as? String == "87%", "\(battery)")
        let manufacturer = try #require(characteristics.first { $0["uuid"] as? String == "2A29" })
        try #require((manufacturer["value"] as? String)?.lowercased() == Array("BareBLE".utf8).map { String(format: "%02x", $0) }.joined(), "\(manufacturer)")
        print("kernel guest: explore over hci-raw:0: \(services.count) services, \(characteristics.count) characteristics, \(ours.count) declarations equal to the peer's")
    }

    /// `write`, then `read` shows the value back (and the peer logged the write);
    /// `subscribe --count 2` prints the two values the peer notifies, then unsubscribes.
    static func writeReadSubscribe() async throws {
        try Adapters.bringUp(index: 0)
        let harness = try KernelGuest.radio.get()
        let text = "tool \(UInt16.random(in: 0...9999))"
        let hex = Array(text.utf8).map { String(format: "%02x", $0) }.joined()
        let write = try await KernelAdapterCases.runTool(["write", address + "/random", KernelGuest.readWriteUUID, text, "--text"] + transport)
        try #require(write.status == 0, "write: \(write.errors)")
        try #require(write.output.contains("wrote \(text.utf8.count) bytes") && write.output.contains("(confirmed)"), "\(write.output)")
        try await harness.waitForEvent("gatt-write", timeout: .seconds(10)) { ($0["value"] as? String)?.lowercased() == hex }
        let read = try await KernelAdapterCases.runTool(["read", address + "/random", KernelGuest.readWriteUUID, "--json"] + transport)
        try #require(read.status == 0, "read: \(read.errors)")
        let value = try #require(try JSONSerialization.jsonObject(with: Data(read.output.utf8)) as? [String: Any], "\(read.output)")
        try #require((value["value"] as? String)?.lowercased() == hex, "read back \(value), wrote \(hex)")

        let subscriber = try KernelAdapterCases.startTool(["subscribe", address + "/random", KernelGuest.notifyUUID, "--count", "2", "--json"] + transport)
        let subscribed: Bool
        do {
            try await harness.waitForEvent("subscription", timeout: .seconds(40)) {
                ($0["characteristic"] as? String)?.uppercased() == KernelGuest.notifyUUID && $0["cccd"] as? String == "notify"
            }
            subscribed = true
        } catch {
            subscribed = false
        }
        guard subscribed else {
            kill(subscriber.pid, SIGTERM)
            let run = try await subscriber.finish()
            throw KernelCaseFailure("the peer saw no subscription from `subscribe`: status \(run.status), \(run.errors)")
        }
        try await harness.control("notify peripheral \(KernelGuest.notifyUUID) 0a0b")
        try await harness.control("notify peripheral \(KernelGuest.notifyUUID) 0c0d")
        let run = try await subscriber.finish(within: .seconds(30), "`subscribe --count 2` after two notifications")
        try #require(run.status == 0, "subscribe: \(run.errors)")
        let values = run.output.split(separator: "\n").compactMap { line in
            ((try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["value"] as? String)?.lowercased()
        }
        try #require(values == ["0a0b", "0c0d"], "subscribe printed \(run.output)")
        try #require(run.errors.contains("unsubscribed after 2 values"), "\(run.errors)")
        try await harness.waitForEvent("subscription", timeout: .seconds(10)) {
            ($0["characteristic"] as? String)?.uppercased() == KernelGuest.notifyUUID && $0["cccd"] as? String == "none"
        }
    }

    /// The characteristic that needs encryption: with `--no-auto-pair` the refusal and the
    /// advice to pair; without, the refusal raises BT_SECURITY, the kernel pairs with the
    /// peer (its `pairing-complete`), and the read is retried and returns the value.
    static func readPairsThroughKernel() async throws {
        // The kernel's SMP needs a managed adapter: the tool's own way to power it on.
        let up = try await KernelAdapterCases.runTool(["adapters", "--up", "0"])
        try #require(up.status == 0, "adapters --up 0: \(up.errors)")
        // An earlier case paired: without this the kernel would encrypt with that key
        // instead of pairing.
        let forgot = try KernelManagement.unpair(index: 0, peer: KernelGuest.peripheral)
        try #require(!(try KernelManagement.unpair(index: 0, peer: KernelGuest.peripheral)), "a second Unpair Device found keys still there")
        print("kernel guest: Unpair Device \(forgot ? "removed the kernel's keys for" : "found no keys for") \(KernelGuest.peripheral)")
        let harness = try KernelGuest.radio.get()
        let refused = try await KernelAdapterCases.runTool(["read", address + "/random", KernelGuest.encryptedUUID, "--no-auto-pair"] + transport)
        try #require(refused.status != 0, "read without pairing succeeded: \(refused.output)")
        try #require(refused.errors.contains("Insufficient"), "\(refused.errors)")
        try #require(refused.errors.contains("needs an encrypted link: pair first"), "\(refused.errors)")

        let read = try await KernelAdapterCases.runTool(["read", address + "/random", KernelGuest.encryptedUUID, "--json"] + transport)
        try #require(read.status == 0, "read with auto-pairing: \(read.errors)")
        let value = try #require(try JSONSerialization.jsonObject(with: Data(read.output.utf8)) as? [String: Any], "\(read.output)")
        try #require((value["value"] as? String)?.lowercased() == "736563726574", "the value \"secret\": \(value)")
        let paired = try await harness.waitForEvent("pairing-complete", timeout: .seconds(5)) { $0["peer"] as? String == "peripheral" }
        print("kernel guest: the kernel paired for `read`: \(paired["method"] ?? "?"), sc \(paired["sc"] ?? "?"), bonding \(paired["bonding"] ?? "?")")
    }

    /// `pair --io keyboard-display`: the kernel pairs at `high`, the peer (display-only)
    /// shows a passkey, the tool's terminal delegate asks for it and reads what the user
    /// typed (its stdin); the peer pairs by passkey entry with authenticated keys.
    static func pairTypesThePasskey() async throws {
        try Adapters.bringUp(index: 0)
        try KernelManagement.powerOnManaged(index: 0)
        _ = try KernelManagement.unpair(index: 0, peer: KernelGuest.peripheral)
        let harness = try KernelGuest.radio.get()
        let passkey = UInt32.random(in: 100_000...999_999)
        try await harness.control("pairing peripheral io=display-only mitm=1 sc=1 passkey=\(passkey)")
        // The peer's settings back only at the end: waiting for the ack skips every event
        // before it.
        try await withCleanup {
            let pair = try await KernelAdapterCases.runTool(["pair", address + "/random", "--io", "keyboard-display"] + transport, input: "\(passkey)\n")
            try #require(pair.status == 0, "pair: \(pair.errors)")
            try #require(pair.errors.contains("type the 6-digit passkey the device shows"), "the prompt: \(pair.errors)")
            // At least high; an authenticated LE Secure Connections key of 16 octets is what
            // the kernel calls fips (seen on 6.1).
            try #require(["high", "fips"].contains { pair.output.contains("the kernel secured the link (security \($0))") }, "\(pair.output)")
            let complete = try await harness.waitForEvent("pairing-complete", timeout: .seconds(5)) { $0["peer"] as? String == "peripheral" }
            try #require(complete["method"] as? String == "passkey", "\(complete)")
            try #require((complete["keys"] as? [String: Any])?["authenticated"] as? Bool == true, "\(complete)")
        } cleanup: {
            try await harness.control("pairing peripheral io=no-input-no-output passkey=ask")
        }
    }
}
