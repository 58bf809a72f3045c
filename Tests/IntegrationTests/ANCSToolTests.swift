import Foundation
import Testing
import TestSupport

/// `bareble-ancs run` as a process against the emulated iPhone: JSON lines, an action typed
/// on stdin, `--exec` fed each notification, `--count` ending the run.
@Suite(.serialized) struct ANCSToolVirtualRadio {
    static let radio = Result { try ANCSRadio() }

    @Test("run --json --count 2 --exec: notifications as JSON lines, positive UID on stdin removes one, the command gets each line")
    func runWithActionAndExec() async throws {
        let harness = try Self.radio.get().harness
        let phone = try await Self.radio.get().addPhone("present=0")
        let ack = try await Self.radio.get().phone(phone, #"add {"category": "IncomingCall", "app": "com.apple.mobilephone", "title": "Bob", "message": "Ring"}"#)
        let uid = try #require(ack["uid"] as? Int)
        let execFile = RadioPeripheral.temporaryPath("ancs-exec")
        let tool = try ToolProcess(
            ["run", "--json", "--name", "BareBLE-ANCS-T", "--count", "2", "--exec", "cat >> \(execFile); grep '^SigIgn:' /proc/self/status >> \(execFile).signals",
             "--bond-dir", RadioPeripheral.temporaryPath("ancs-bonds"), "--transport", "tcp:127.0.0.1:\(harness.radio.tcpPort)"],
            tool: "bareble-ancs", input: true)
        defer { tool.stop() }
        _ = try await tool.next("advertising") { $0["event"] as? String == "advertising" }
        try await Self.radio.get().phone(phone, "return")
        // The pairing's end and the first notification are told by separate tasks: either
        // line may come first.
        let added = try await tool.next(all: "paired and the notification", timeout: .seconds(60), [
            { $0["event"] as? String == "notification" },
            { $0["event"] as? String == "paired" && $0["bonded"] as? Bool == true },
        ])[0]
        #expect(added.object["kind"] as? String == "added")
        #expect(added.object["uid"] as? Int == uid)
        #expect(added.object["category"] as? String == "IncomingCall")
        #expect(added.object["appName"] as? String == "Phone")
        #expect(added.object["title"] as? String == "Bob" && added.object["message"] as? String == "Ring")
        #expect(added.object["positiveAction"] as? String == "Answer")
        #expect(added.object["date"] as? String == "2025-01-02T03:\(String(format: "%02d", (4 + uid) % 60)):05")
        #expect((added.object["flags"] as? [String])?.contains("preExisting") == true)

        try tool.type("positive \(uid)")
        // The phone sends Removed right after its Write Response: either line may come first.
        var seen: Set<String> = []
        while seen.count < 2 {
            let line = try await tool.next("the action's outcome and the removal") {
                ($0["event"] as? String == "action" && $0["uid"] as? Int == uid && $0["error"] is NSNull)
                    || ($0["event"] as? String == "notification" && $0["kind"] as? String == "removed" && $0["uid"] as? Int == uid)
            }
            seen.insert(line.object["event"] as? String ?? "")
        }
        try tool.type("frobnicate")
        _ = try await tool.next("the refusal of an unknown command") { $0["event"] as? String == "error" && $0["command"] as? String == "frobnicate" }

        try await Self.radio.get().phone(phone, #"add {"title": "second"}"#)
        let exit = try await tool.finish()
        #expect(exit.status == 0, "\(exit.errors)")
        let lines = try String(contentsOfFile: execFile, encoding: .utf8).split(separator: "\n")
        let objects = lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(objects.compactMap { $0["kind"] as? String } == ["added", "removed", "added"])
        #expect(objects.last?["title"] as? String == "second")
        // The command starts as from a shell: the tool's own SIGPIPE ignore is not passed on
        // (a `while :; do echo; done | head` would never end), nor is SIGINT's or SIGTERM's.
        let ignored = try String(contentsOfFile: execFile + ".signals", encoding: .utf8).split(separator: "\n")
            .map { UInt64($0.split(separator: ":").last?.filter { !$0.isWhitespace } ?? "", radix: 16) }
        #expect(ignored.count == 3)
        for mask in ignored {
            #expect(mask.map { $0 & (1 << (UInt64(SIGPIPE) - 1) | 1 << (UInt64(SIGINT) - 1) | 1 << (UInt64(SIGTERM) - 1)) } == 0,
                    "ignored in the command: \(mask.map { String($0, radix: 16) } ?? "?")")
        }
        try await Self.radio.get().phone(phone, "leave", timeout: .seconds(30))
    }

    /// The soak on the tool's own process (the test process's RSS holds the radio's whole
    /// event log): the phone leaves and comes back from a new RPA again and again, a
    /// notification added each time is printed, nothing pairs again, and the tool's RSS
    /// stays flat over the second half (the first half warms the allocator up). `BAREBLE_ANCS_SOAK_CYCLES` sets the cycles (80 by
    /// default, at least 20; 200 for the figure in specs/ancs.md). At 40, one step of the
    /// allocator's heap (172 kB) in a 20-cycle window read as 8.6 kB a cycle in a loaded
    /// full run; over 40 cycles such a step stays under the bound, while the leak this
    /// guards against (11 kB a cycle) does not.
    @Test("run: 80 reconnects from new RPAs, every notification printed, no new pairing, the tool's RSS under 5 kB a cycle over the second half")
    func reconnectsKeepMemoryFlat() async throws {
        let cycles = max(20, ProcessInfo.processInfo.environment["BAREBLE_ANCS_SOAK_CYCLES"].flatMap(Int.init) ?? 80)
        let warmUp = cycles / 2
        let harness = try Self.radio.get().harness
        let phone = try await Self.radio.get().addPhone("present=0")
        let tool = try ToolProcess(
            ["run", "--json", "--name", "BareBLE-ANCS-R", "--bond-dir", RadioPeripheral.temporaryPath("ancs-soak-bonds"),
             "--transport", "tcp:127.0.0.1:\(harness.radio.tcpPort)"],
            tool: "bareble-ancs", input: true)
        defer { tool.stop() }
        _ = try await tool.next("advertising") { $0["event"] as? String == "advertising" }
        try await Self.radio.get().phone(phone, "return")
        // Either may come first (the subscription starts once the link is encrypted, the
        // pairing's end is told after its bond is saved): waiting for them in this order
        // lost a "subscribed" printed first, twice in loaded runs.
        _ = try await tool.next(all: "paired and subscribed", timeout: .seconds(60), [
            { $0["event"] as? String == "paired" && $0["bonded"] as? Bool == true },
            { $0["event"] as? String == "subscribed" },
        ])
        var resident: [Int: Int] = [:]
        var missed = 0
        for cycle in 1...cycles {
            try await Self.radio.get().phone(phone, "reconnect", timeout: .seconds(90))
            _ = try await tool.next("subscribed again \(cycle)", timeout: .seconds(60)) {
                if $0["event"] as? String == "paired" { Issue.record("paired again in cycle \(cycle)") }
                return $0["event"] as? String == "subscribed"
            }
            let ack = try await Self.radio.get().phone(phone, #"add {"title": "cycle \#(cycle)"}"#)
            let uid = try #require(ack["uid"] as? Int)
            let told = try await tool.next("cycle \(cycle)'s notification", timeout: .seconds(30)) {
                $0["event"] as? String == "notification" && $0["kind"] as? String == "added" && $0["uid"] as? Int == uid
            }
            if told.object["title"] as? String != "cycle \(cycle)" { missed += 1 }
            try await Self.radio.get().phone(phone, "remove \(uid)")
            if [10, warmUp, cycles].contains(cycle) { resident[cycle] = tool.residentKilobytes }
        }
        let start = try #require(resident[warmUp]), end = try #require(resident[cycles])
        let perCycle = Double(end - start) / Double(cycles - warmUp)
        print("bareble-ancs run: RSS \(resident.sorted { $0.key < $1.key }.map { "\($0.value) kB after \($0.key)" }.joined(separator: ", ")) cycles; \(String(format: "%.1f", perCycle)) kB a cycle after \(warmUp); missed \(missed)")
        #expect(missed == 0)
        #expect(start > 0 && perCycle < 5, "RSS grew from \(start) kB to \(end) kB over \(cycles - warmUp) reconnects")
        try await Self.radio.get().phone(phone, "leave", timeout: .seconds(30))
    }
}
