import Foundation
import HCITransport
import SMP
import Testing
import TestSupport

/// `bareble-central pair`, the built executable, against the radio's HRM peripheral and
/// Bumble's SMP; the test plays the user at the tool's stdin and reads what the peer's user
/// sees from the radio's event log.
///
/// The tool runs over the radio's pty: one exposed controller whose public address
/// (F0:0D:00:00:01:01) stays the same from one run of the tool to the next, as a real
/// adapter's does. That is what lets a later run find the bond (the store is per local
/// identity, and the peer keeps our bond under that identity); a TCP client would get a
/// fresh controller with a new address each time.
@Suite(.serialized) struct PairToolVirtualRadio {
    static let harness = Result { try RadioHarness(arguments: ["--pty", "--peripheral"]) }
    static let log = Result { RadioEventLog(try harness.get()) }
    /// The pty controller's address as the radio's peers name it.
    static let ours = "F0:0D:00:00:01:01"
    static let peer = RadioPeripheral.address + "/random"
    static let justWorks = "io=no-input-no-output sc=1 bonding=1 mitm=0 confirm=1 passkey=ask stall=off"

    func transport() throws -> [String] {
        ["--transport", "serial:\(try #require(try Self.harness.get().radio.ptyPath))"]
    }

    /// Radio events of the peripheral about our controller.
    static let aboutUs: @Sendable ([String: Any]) -> Bool = {
        $0["peer"] as? String == "peripheral" && ($0["address"] as? String)?.hasPrefix(ours) == true
    }

    func central(_ arguments: [String]) async throws -> CentralTool.Run {
        let all = arguments + (try transport())
        return try await onOwnThread { try CentralTool.runBlocking(all, environment: [:]) }
    }

    /// `pair` with a pipe as stdin, for the test to answer the tool's questions.
    func pairing(_ arguments: [String]) throws -> ToolProcess {
        try ToolProcess(["pair", Self.peer] + arguments + (try transport()), tool: "bareble-central", input: true)
    }

    func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "not JSON: \(text)")
    }

    /// The bonds `bareble-central bonds list --json` shows in `directory`, over all identities.
    func listedBonds(_ directory: String) async throws -> [[String: Any]] {
        let listed = try await onOwnThread { try CentralTool.runBlocking(["bonds", "list", "--json", "--bond-dir", directory], environment: [:]) }
        #expect(listed.status == 0, "\(listed.errors)")
        let identities = try json(listed.output)["identities"] as? [[String: Any]] ?? []
        for identity in identities { #expect(identity["local"] as? String == Self.ours + "/public") }
        return identities.flatMap { $0["bonds"] as? [[String: Any]] ?? [] }
    }

    /// Waits until the radio saw the tool's link end, so the log has been read past it.
    func linkEnded(_ log: RadioEventLog) async throws {
        try await log.wait("disconnected", where: Self.aboutUs)
    }

    @Test func justWorksBondsAndALaterReadReencryptsWithoutPairing() async throws {
        let log = try Self.log.get()
        let directory = RadioPeripheral.temporaryPath("pair-bonds")
        try await log.control("pairing peripheral \(Self.justWorks)")
        let paired = try await central(["pair", Self.peer, "--json", "--bond-dir", directory])
        #expect(paired.status == 0, "\(paired.errors)")
        let result = try json(paired.output)
        #expect(result["method"] as? String == "Just Works")
        #expect(result["secureConnections"] as? Bool == true)
        #expect(result["authenticated"] as? Bool == false)
        #expect(result["keySize"] as? Int == 16)
        #expect(result["identity"] as? String == Self.peer)
        #expect(result["bondSaved"] as? Bool == true)
        #expect((result["bondFile"] as? String)?.hasPrefix(directory + "/") == true, "\(result)")
        let bumble = try await log.wait("pairing-complete", where: Self.aboutUs)
        #expect(bumble["method"] as? String == "just-works" && bumble["bonding"] as? Bool == true)
        try await linkEnded(log)

        let bonds = try await listedBonds(directory)
        #expect(bonds.count == 1)
        #expect(bonds.first?["peer"] as? String == RadioPeripheral.address && bonds.first?["type"] as? String == "random")
        #expect(bonds.first?["secure_connections"] as? Bool == true)
        #expect((bonds.first?["peer_keys"] as? [String])?.contains("ltk/16") == true, "\(bonds)")

        // A new process reads the encrypted characteristic. --no-auto-pair: it could not pair
        // even if it wanted to; the bond must do it.
        let mark = log.count
        let capture = RadioPeripheral.temporaryPath("pair-read.btsnoop")
        let read = try await central(["read", Self.peer, RadioPeripheral.encrypted, "--no-auto-pair", "--bond-dir", directory, "--btsnoop", capture])
        #expect(read.status == 0, "\(read.errors)")
        #expect(read.output.lowercased().contains("736563726574"), "\(read.output)")  // "secret"
        try await log.wait("encryption-change", where: { Self.aboutUs($0) && $0["encrypted"] as? Bool == true })
        try await linkEnded(log)
        let pairingEvents = log.events(since: mark).filter { ($0["event"] as? String)?.hasPrefix("pairing-") == true && Self.aboutUs($0) }
        #expect(pairingEvents.isEmpty, "the reconnect paired: \(pairingEvents)")
        // The tool's own capture: LE Enable Encryption, and not one SMP packet (CID 6).
        let records = try BTSnoopFile(contentsOf: capture).records.map(\.data)
        #expect(records.contains { $0.count >= 3 && $0[0] == 0x01 && $0[1] == 0x19 && $0[2] == 0x20 }, "no LE Enable Encryption")
        #expect(!records.contains { $0.count >= 9 && $0[0] == 0x02 && $0[7] == 0x06 && $0[8] == 0x00 }, "SMP traffic on the reconnect")
    }

    @Test func passkeyShownByTheDeviceIsTypedOnStdin() async throws {
        let log = try Self.log.get()
        try await log.control("pairing peripheral io=display-only sc=1 bonding=1 mitm=1 confirm=1 passkey=ask stall=off")
        let tool = try pairing(["--io", "keyboard-only", "--json", "--bond-dir", RadioPeripheral.temporaryPath("pair-passkey")])
        defer { tool.stop() }
        let shown = try #require(try await log.wait("pairing-display", where: Self.aboutUs)["number"] as? Int)
        _ = try await tool.errorsContaining("type the 6-digit passkey the device shows")
        try tool.type(passkeyText(UInt32(shown)))
        let exit = try await tool.finish()
        #expect(exit.status == 0, "\(exit.errors)")
        let result = try json(exit.output)
        #expect((result["method"] as? String)?.hasPrefix("Passkey Entry") == true, "\(result)")
        #expect(result["authenticated"] as? Bool == true && result["secureConnections"] as? Bool == true)
        let bumble = try await log.wait("pairing-complete", where: Self.aboutUs)
        #expect(bumble["method"] as? String == "passkey")
        try await linkEnded(log)
    }

    @Test func aPasskeyTheToolShowsIsTypedOnTheDevice() async throws {
        let log = try Self.log.get()
        try await log.control("pairing peripheral io=keyboard-only sc=1 bonding=1 mitm=1 confirm=1 passkey=ask stall=off")
        let tool = try pairing(["--io", "display-only", "--json", "--bond-dir", RadioPeripheral.temporaryPath("pair-display")])
        defer { tool.stop() }
        let errors = try await tool.errorsContaining(" on the device\n")
        let shown = try #require(errors.range(of: "type the passkey "), "\(errors)")
        let passkey = String(errors[shown.upperBound...].prefix(6))
        #expect(passkey.count == 6 && passkey.allSatisfy(\.isNumber), "\(errors)")
        try await log.wait("pairing-passkey-request", where: Self.aboutUs)
        try await log.control("passkey peripheral \(passkey)")
        let exit = try await tool.finish()
        #expect(exit.status == 0, "\(exit.errors)")
        #expect((try json(exit.output)["method"] as? String)?.hasPrefix("Passkey Entry") == true)
        try await log.wait("pairing-complete", where: Self.aboutUs)
        try await linkEnded(log)
    }

    @Test func numericComparisonAnsweredYes() async throws {
        let log = try Self.log.get()
        try await log.control("pairing peripheral io=display-yesno sc=1 bonding=1 mitm=1 confirm=1 passkey=ask stall=off")
        let tool = try pairing(["--io", "display-yesno", "--json", "--bond-dir", RadioPeripheral.temporaryPath("pair-nc")])
        defer { tool.stop() }
        let number = try #require(try await log.wait("pairing-compare", where: Self.aboutUs)["number"] as? Int)
        let question = try await tool.errorsContaining("[y/n]")
        #expect(question.contains("does the device show \(passkeyText(UInt32(number)))?"), "\(question)")
        try tool.type("y")
        let exit = try await tool.finish()
        #expect(exit.status == 0, "\(exit.errors)")
        let result = try json(exit.output)
        #expect(result["method"] as? String == "Numeric Comparison" && result["authenticated"] as? Bool == true, "\(result)")
        #expect(try await log.wait("pairing-complete", where: Self.aboutUs)["method"] as? String == "numeric-comparison")
        try await linkEnded(log)
    }

    @Test func aWrongPasskeyFailsWithConfirmValueFailedAndStoresNothing() async throws {
        let log = try Self.log.get()
        let directory = RadioPeripheral.temporaryPath("pair-wrong")
        try await log.control("pairing peripheral io=display-only sc=1 bonding=1 mitm=1 confirm=1 passkey=123456 stall=off")
        let tool = try pairing(["--io", "keyboard-only", "--bond-dir", directory])
        defer { tool.stop() }
        #expect(try await log.wait("pairing-display", where: Self.aboutUs)["number"] as? Int == 123_456)
        _ = try await tool.errorsContaining("passkey the device shows")
        try tool.type("654321")
        let exit = try await tool.finish()
        #expect(exit.status != 0)
        #expect(exit.errors.contains("Confirm Value Failed") && exit.errors.contains("try again"), "\(exit.errors)")
        #expect(try await log.wait("pairing-failed", where: Self.aboutUs)["reason"] as? Int == 0x04)
        try await linkEnded(log)
        #expect(try await listedBonds(directory).isEmpty)
    }

    /// A bond made with numeric comparison; then the device (or another on its address)
    /// offers only Just Works. The tool refuses the downgrade at the Pairing Response
    /// (Authentication Requirements, which Bumble reports), says how to pair that way
    /// anyway, and the authenticated bond stays as it was.
    @Test func aWeakerPairingOverAnAuthenticatedBondIsRefusedAndTheBondKept() async throws {
        let log = try Self.log.get()
        let directory = RadioPeripheral.temporaryPath("pair-downgrade")
        try await log.control("pairing peripheral io=display-yesno sc=1 bonding=1 mitm=1 confirm=1 passkey=ask stall=off")
        let tool = try pairing(["--io", "display-yesno", "--json", "--bond-dir", directory])
        defer { tool.stop() }
        _ = try await log.wait("pairing-compare", where: Self.aboutUs)
        _ = try await tool.errorsContaining("[y/n]")
        try tool.type("y")
        let first = try await tool.finish()
        #expect(first.status == 0, "\(first.errors)")
        #expect(try json(first.output)["authenticated"] as? Bool == true)
        try await log.wait("pairing-complete", where: Self.aboutUs)
        try await linkEnded(log)
        let before = try await listedBonds(directory)

        try await log.control("pairing peripheral \(Self.justWorks)")
        let second = try await central(["pair", Self.peer, "--bond-dir", directory])
        #expect(second.status != 0)
        #expect(second.errors.contains("weaker") && second.errors.contains("remove the bond first"), "\(second.errors)")
        #expect(try await log.wait("pairing-failed", where: Self.aboutUs)["reason"] as? Int == 0x03)
        try await linkEnded(log)
        let after = try await listedBonds(directory)
        #expect(after.count == 1 && after.first?["authenticated"] as? Bool == true, "\(after)")
        #expect(after.first?["created"] as? Int == before.first?["created"] as? Int, "the bond was rewritten")
    }

    /// A question nobody answers: stdin closed (at once) or silent past --answer-timeout.
    struct Unanswered: Sendable, CustomTestStringConvertible {
        var radio: String
        var io: String
        var closesInput: Bool
        /// What the tool says, the radio's event for the question, the reason the radio got.
        var says: String
        var question: String
        var reason: Int
        var testDescription: String { "\(question), \(closesInput ? "stdin closed" : "no answer")" }

        static let all = [
            Unanswered(radio: "display-only", io: "keyboard-only", closesInput: true, says: "stdin is closed", question: "pairing-display", reason: 0x01),
            Unanswered(radio: "display-yesno", io: "display-yesno", closesInput: false, says: "no answer within 2 s", question: "pairing-compare", reason: 0x0C),
        ]
    }

    /// We cancel with the specification's reason (Passkey Entry Failed, Numeric Comparison
    /// Failed) instead of leaving the device to its 30 s timer.
    @Test(arguments: Unanswered.all) func anUnansweredQuestionCancelsBeforeTheSMPTimer(_ test: Unanswered) async throws {
        let log = try Self.log.get()
        try await log.control("pairing peripheral io=\(test.radio) sc=1 bonding=1 mitm=1 confirm=1 passkey=ask stall=off")
        let tool = try pairing(["--io", test.io, "--answer-timeout", "2", "--bond-dir", RadioPeripheral.temporaryPath("pair-unanswered")])
        defer { tool.stop() }
        if test.closesInput { try tool.closeInput() }
        let exit = try await tool.finish()
        #expect(exit.status != 0)
        let reason = test.reason == 0x01 ? "Passkey Entry Failed" : "Numeric Comparison Failed"
        #expect(exit.errors.contains(test.says) && exit.errors.contains(reason), "\(exit.errors)")
        try await log.wait(test.question, where: Self.aboutUs)
        #expect(try await log.wait("pairing-failed", where: Self.aboutUs)["reason"] as? Int == test.reason)
        try await linkEnded(log)
    }

    @Test func scOnlyRefusesALegacyOnlyDevice() async throws {
        let log = try Self.log.get()
        let directory = RadioPeripheral.temporaryPath("pair-sc-only")
        try await log.control("pairing peripheral io=no-input-no-output sc=0 bonding=1 mitm=0 confirm=1 passkey=ask stall=off")
        let refused = try await central(["pair", Self.peer, "--sc-only", "--bond-dir", directory])
        #expect(refused.status != 0)
        #expect(refused.errors.contains("Authentication Requirements") && refused.errors.contains("leave out --sc-only"), "\(refused.errors)")
        #expect(try await log.wait("pairing-failed", where: Self.aboutUs)["reason"] as? Int == 0x03)
        try await linkEnded(log)
        #expect(try await listedBonds(directory).isEmpty)
    }

    @Test func noBondPairsButStoresNothing() async throws {
        let log = try Self.log.get()
        let directory = RadioPeripheral.temporaryPath("pair-no-bond")
        try await log.control("pairing peripheral \(Self.justWorks)")
        let paired = try await central(["pair", Self.peer, "--no-bond", "--json", "--bond-dir", directory])
        #expect(paired.status == 0, "\(paired.errors)")
        let result = try json(paired.output)
        #expect(result["bonded"] as? Bool == false && result["bondSaved"] as? Bool == false, "\(result)")
        #expect(result["bondFile"] is NSNull)
        #expect(try await log.wait("pairing-complete", where: Self.aboutUs)["bonding"] as? Bool == false)
        try await linkEnded(log)
        #expect(try await listedBonds(directory).isEmpty)
    }

    /// Any connecting subcommand has the terminal delegate: a read the device refuses pairs
    /// on its own and asks for the passkey like `pair` does.
    @Test func aReadThatNeedsPairingAsksForThePasskey() async throws {
        let log = try Self.log.get()
        try await log.control("pairing peripheral io=display-only sc=1 bonding=1 mitm=1 confirm=1 passkey=ask stall=off")
        let tool = try ToolProcess(
            ["read", Self.peer, RadioPeripheral.encrypted, "--io", "keyboard-only", "--bond-dir", RadioPeripheral.temporaryPath("read-pairs")] + (try transport()),
            tool: "bareble-central", input: true)
        defer { tool.stop() }
        let shown = try #require(try await log.wait("pairing-display", where: Self.aboutUs)["number"] as? Int)
        try tool.type(passkeyText(UInt32(shown)))
        let exit = try await tool.finish()
        #expect(exit.status == 0, "\(exit.errors)")
        #expect(exit.output.lowercased().contains("736563726574"), "\(exit.output)")
        #expect(try await log.wait("pairing-complete", where: Self.aboutUs)["method"] as? String == "passkey")
        try await linkEnded(log)
    }
}
