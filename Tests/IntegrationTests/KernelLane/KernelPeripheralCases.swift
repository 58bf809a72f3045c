import BluetoothCore
import Foundation
import Glibc
import HCITransport
import KernelHost
import L2CAP
import Testing
import TestSupport

/// The peripheral role on hci-raw:N, in the lane's guest: the built `bareble-peripheral
/// serve --transport hci-raw:0` advertises on hci0's raw channel and serves through the
/// kernel's ATT listener; `bareble-central --transport hci-raw:1`, a central made by hci1's
/// kernel, explores, reads, pairs (both kernels' SMP) and subscribes. The database served
/// is a clone of the Bumble peripheral's (explored first), so the oracle is Bumble's own
/// account of its database, not our output.
enum KernelPeripheralCases {
    static let hci0 = "F0:0D:00:00:02:00/public"
    static let secret = "736563726574"  // "secret"

    static func servesThroughKernel() async throws {
        // The kernel's SMP needs managed adapters, on both sides; keys an earlier run left
        // would make the kernels encrypt instead of pairing.
        for index in [0, 1] {
            // Up first (HCIDEVUP): a just-registered adapter may not be on the management
            // interface yet (seen once with this case first in the guest: Invalid Index).
            try Adapters.bringUp(index: index)
            let up = try await KernelAdapterCases.runTool(["adapters", "--up", "\(index)"])
            try #require(up.status == 0, "adapters --up \(index): \(up.errors)")
        }
        _ = try KernelManagement.unpair(index: 0, peer: DeviceAddress(KernelGuest.hci1Address, type: .public))
        _ = try KernelManagement.unpair(index: 1, peer: DeviceAddress(KernelGuest.hci0Address, type: .public))

        // close() ends an accept at once, whether it was already waiting or starts after
        // (the peripheral host's end relies on it), and frees CID 4 for the server below.
        let listener = try KernelL2CAPListener(adapter: 0)
        let waiting = Task { () -> KernelSocketError? in
            do throws(KernelSocketError) { _ = try await listener.accept(timeout: .seconds(60)) } catch { return error }
            return nil
        }
        let closing = ContinuousClock.now
        listener.close()
        let ended = await waiting.value
        let took = ContinuousClock.now - closing
        guard ended == .listenerClosed, took < .seconds(20) else {
            throw KernelCaseFailure("the listener's close ended its accept with \(String(describing: ended)) after \(took)")
        }

        let clone = try await KernelAdapterCases.runTool(
            ["explore", KernelToolCases.address + "/random", "--json", "--no-auto-pair", "--transport", "hci-raw:1"])
        try #require(clone.status == 0, "explore of the Bumble peer: \(clone.errors)")
        let file = KernelGuest.jobDirectory + "/kernel-peripheral-clone.json"
        try clone.output.write(toFile: file, atomically: true, encoding: .utf8)

        let server = try KernelAdapterCases.startTool(
            ["serve", "--database", file, "--require-encryption", KernelGuest.encryptedUUID, "--transport", "hci-raw:0"],
            executable: builtExecutable(named: "bareble-peripheral"), interactive: true)
        var stopped = false
        defer { if !stopped { kill(server.pid, SIGKILL); _ = server.finishBlocking() } }
        let advertising = try await server.next("advertising") { $0["event"] as? String == "advertising" }
        print("kernel guest: bareble-peripheral on hci-raw:0: \(advertising)")
        // The value the explorer could not read (it needs encryption) is given now.
        try server.type("set \(KernelGuest.encryptedUUID) \(secret)")
        _ = try await server.next("set's result") { $0["event"] as? String == "sent" }

        let transport = ["--transport", "hci-raw:1"]
        let explore = try await KernelAdapterCases.runTool(["explore", hci0, "--json", "--no-auto-pair"] + transport)
        try #require(explore.status == 0, "explore of our server: \(explore.errors)")
        let explored = try #require(try JSONSerialization.jsonObject(with: Data(explore.output.utf8)) as? [String: Any], "\(explore.output)")
        let services = try #require(explored["services"] as? [[String: Any]])
        // The clone is the peer's database, handle for handle (our GATT service has no
        // Server Supported Features without a server feature, as the peer's has none).
        let ours = KernelGuest.entries(ofJSON: services, valueHandleKey: "valueHandle")
        let expected = try await KernelGuest.peerDatabase()
        try #require(ours == expected, "our server's database differs from the peer it cloned:\nmissing \(expected.filter { !ours.contains($0) })\nextra \(ours.filter { !expected.contains($0) })")
        let characteristics = services.flatMap { $0["characteristics"] as? [[String: Any]] ?? [] }
        let encrypted = try #require(characteristics.first { ($0["uuid"] as? String)?.uppercased() == KernelGuest.encryptedUUID })
        try #require(encrypted["value"] is NSNull && encrypted["errorCode"] as? Int == 0x05, "before pairing: \(encrypted)")
        let connected = try await server.next("connected") { $0["event"] as? String == "connected" }
        try #require((connected["central"] as? String)?.hasPrefix(KernelGuest.hci1Address.description) == true, "\(connected)")
        print("kernel guest: explore over hci-raw:1 of our server on hci-raw:0: \(ours.count) declarations equal to the cloned peer's, MTU \(explored["mtu"] ?? "?")")

        let refused = try await KernelAdapterCases.runTool(["read", hci0, KernelGuest.encryptedUUID, "--no-auto-pair"] + transport)
        try #require(refused.status != 0 && refused.errors.contains("Insufficient Authentication"), "read before pairing: \(refused.output) \(refused.errors)")
        let read = try await KernelAdapterCases.runTool(["read", hci0, KernelGuest.encryptedUUID, "--json"] + transport)
        try #require(read.status == 0, "read with the kernel pairing: \(read.errors)")
        let value = try #require(try JSONSerialization.jsonObject(with: Data(read.output.utf8)) as? [String: Any], "\(read.output)")
        try #require((value["value"] as? String)?.lowercased() == secret, "after pairing: \(value)")
        // The link's events and the read's are reported by different paths, in no set
        // order: the read is looked for in the whole output at the end.
        let encryptedEvent = try await server.next("encrypted") { $0["event"] as? String == "encrypted" && $0["encrypted"] as? Bool == true }
        print("kernel guest: the kernels paired; our server saw \(encryptedEvent)")

        let subscriber = try KernelAdapterCases.startTool(["subscribe", hci0, KernelGuest.notifyUUID, "--count", "1", "--json"] + transport)
        let subscribed: [String: Any]
        do {
            // (A central may subscribe to Service Changed first.)
            subscribed = try await server.next("subscribed", timeout: .seconds(40)) {
                $0["event"] as? String == "subscribed" && KernelGuest.upper($0["uuid"]) == KernelGuest.notifyUUID
            }
        } catch {
            kill(subscriber.pid, SIGTERM)
            let run = try await subscriber.finish()
            throw KernelCaseFailure("\(error); the subscriber: status \(run.status), \(run.errors)")
        }
        try #require(subscribed["kind"] as? String == "notifications", "\(subscribed)")
        // A second central at the same time (advertising resumed after hci1's link): a
        // Bumble central on the air, its own link and bearer, refused the protected value
        // until it pairs with hci0's kernel itself, while hci1's link stays encrypted or
        // not as it is.
        let protectedHandle = try #require(encrypted["valueHandle"] as? Int)
        let log = RadioEventLog(try KernelGuest.radio.get())
        let bumble = try #require(try await log.control("add-central")["peer"] as? String)
        let link = try await log.control("central \(bumble) connect \(KernelGuest.hci0Address)", timeout: .seconds(40))
        let hci1 = KernelGuest.hci1Address.description
        let second = try await server.next("the second central") { $0["event"] as? String == "connected" && ($0["central"] as? String)?.hasPrefix(hci1) == false }
        let before = try await log.control("central \(bumble) read \(protectedHandle)", timeout: .seconds(30))
        try #require(before["error"] as? Int == 0x05, "Bumble's read before pairing: \(before)")
        let paired = try await log.control("central \(bumble) pair", timeout: .seconds(90))
        try #require(paired["paired"] as? Bool == true, "Bumble pairing with hci0's kernel: \(paired)")
        let after = try await log.control("central \(bumble) read \(protectedHandle)", timeout: .seconds(30))
        try #require(after["value"] as? String == secret, "Bumble's read after pairing: \(after)")
        try await log.control("central \(bumble) disconnect", timeout: .seconds(20))
        print("kernel guest: a second central (Bumble, \(link)) beside hci1's: \(second); 0x05, paired, read the value")

        try server.type("notify \(KernelGuest.notifyUUID) 0a0b")
        _ = try await server.next("notify's result") { $0["event"] as? String == "sent" }
        let run = try await subscriber.finish(within: .seconds(30), "`subscribe --count 1` after the notification")
        try #require(run.status == 0, "subscribe: \(run.errors)")
        let values = run.output.split(separator: "\n").compactMap { line in
            ((try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["value"] as? String)?.lowercased()
        }
        try #require(values == ["0a0b"], "subscribe printed \(run.output)")
        // The subscriber's socket closed; hci1's kernel drops the idle link ~2 s later, and
        // that ends the central on our side (its socket reports the peer's reason).
        let subscriberHandle = try #require(subscribed["handle"] as? Int)
        let gone = try await server.next("the subscriber's end") { $0["event"] as? String == "disconnected" && $0["handle"] as? Int == subscriberHandle }
        try #require(gone["reason"] as? Int == 0x13, "the peer ended the link: \(gone)")

        kill(server.pid, SIGINT)
        stopped = true
        let exit = try await server.finish()
        try #require(exit.status == 0, "serve: \(exit.errors)")
        let lines = exit.output.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        try #require(lines.contains { $0["event"] as? String == "read" && KernelGuest.upper($0["uuid"]) == KernelGuest.encryptedUUID }, "no read of the protected value reported: \(exit.output)")
        // Both centrals came and went (hci1's tools and the Bumble one), and every link that
        // came up ended. Not one link per tool run: a tool that connects within the ~2 s the
        // kernel keeps an idle link shares the previous run's (seen: the two reads on one
        // link, four links for five runs; every run of hci1 on one link).
        func count(_ event: String) -> [String: Int] {
            lines.filter { $0["event"] as? String == event }.reduce(into: [:]) { $0[$1["central"] as? String ?? "?", default: 0] += 1 }
        }
        let connections = count("connected")
        let hci1Central = KernelGuest.hci1Address.description + "/public"
        try #require(connections.keys.contains(hci1Central) && connections.count >= 2 && count("disconnected") == connections,
                     "each central's links ended (explore, two reads, Bumble, subscribe): \(exit.output)")
    }
}
