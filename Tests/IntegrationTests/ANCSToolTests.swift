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
            ["run", "--json", "--name", "BareBLE-ANCS-T", "--count", "2", "--exec", "cat >> \(execFile)",
             "--bond-dir", RadioPeripheral.temporaryPath("ancs-bonds"), "--transport", "tcp:127.0.0.1:\(harness.radio.tcpPort)"],
            tool: "bareble-ancs", input: true)
        defer { tool.stop() }
        _ = try await tool.next("advertising") { $0["event"] as? String == "advertising" }
        try await Self.radio.get().phone(phone, "return")
        _ = try await tool.next("paired", timeout: .seconds(60)) { $0["event"] as? String == "paired" && $0["bonded"] as? Bool == true }
        let added = try await tool.next("the notification", timeout: .seconds(60)) { $0["event"] as? String == "notification" }
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
        try await Self.radio.get().phone(phone, "leave", timeout: .seconds(30))
    }
}
