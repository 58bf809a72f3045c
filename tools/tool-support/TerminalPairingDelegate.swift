import BluetoothCore
import Glibc
import SMP

/// The user's side of pairing on a terminal: a passkey to type on the device is shown, a
/// passkey the device shows is asked for, a numeric comparison is asked as y/n. Questions
/// go to stderr, answers come from stdin.
///
/// Every question gives up after ``answerTimeout`` (below the SMP timer's 30 s) or at once
/// when stdin is closed: the pairing is then cancelled with the specification's reason
/// (Passkey Entry Failed, Numeric Comparison Failed) instead of waiting for the peer to
/// time out, and the message says why.
public struct TerminalPairingDelegate: PairingDelegate {
    /// Seconds a question waits for an answer. The SMP timer runs from our last PDU before
    /// the question, so an answer given within this still leaves the pairing time to go on.
    let answerTimeout: Double
    let input: TerminalInput

    public init(answerTimeout: Double, input: TerminalInput = .shared) {
        self.answerTimeout = answerTimeout
        self.input = input
    }

    private var timeout: Duration { .milliseconds(Int64((answerTimeout * 1000).rounded())) }

    public func displayPasskey(_ passkey: UInt32, peer: DeviceAddress) async {
        writePrompt("pairing with \(peer): type the passkey \(passkeyText(passkey)) on the device\n")
    }

    public func enterPasskey(peer: DeviceAddress) async -> UInt32? {
        let deadline = ContinuousClock.now + timeout
        writePrompt("pairing with \(peer): type the 6-digit passkey the device shows, then Enter (within \(Self.seconds(answerTimeout)) s): ")
        while true {
            switch await answer(by: deadline) {
            case let .line(text):
                let digits = text.trimmingWhitespace
                if !digits.isEmpty, digits.count <= 6, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let passkey = UInt32(digits) {
                    return passkey
                }
                writePrompt("\"\(digits)\" is not a passkey (six digits, 000000 to 999999); type it again: ")
            case .closed:
                writePrompt("\nstdin is closed: no passkey can be typed, so pairing is cancelled (Passkey Entry Failed)\n")
                return nil
            case .timedOut:
                writePrompt("\nno passkey within \(Self.seconds(answerTimeout)) s: pairing is cancelled (Passkey Entry Failed) before the device's 30 s timer ends it\n")
                return nil
            }
        }
    }

    public func confirmNumericComparison(_ value: UInt32, peer: DeviceAddress) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        writePrompt("pairing with \(peer): does the device show \(passkeyText(value))? [y/n] (within \(Self.seconds(answerTimeout)) s): ")
        while true {
            switch await answer(by: deadline) {
            case let .line(text):
                switch text.trimmingWhitespace.lowercased() {
                case "y", "yes": return true
                case "n", "no":
                    writePrompt("the numbers differ: pairing is refused (Numeric Comparison Failed)\n")
                    return false
                default: writePrompt("answer y or n: ")
                }
            case .closed:
                writePrompt("\nstdin is closed: nobody can compare the numbers, so pairing is refused (Numeric Comparison Failed)\n")
                return false
            case .timedOut:
                writePrompt("\nno answer within \(Self.seconds(answerTimeout)) s: pairing is refused (Numeric Comparison Failed) before the device's 30 s timer ends it\n")
                return false
            }
        }
    }

    /// The next answer; a line that came from a pipe was not echoed, so the next output
    /// gets a line of its own.
    private func answer(by deadline: ContinuousClock.Instant) async -> TerminalInput.Answer {
        let answer = await input.line(within: deadline - ContinuousClock.now)
        if case .line = answer, isatty(0) == 0 { writePrompt("\n") }
        return answer
    }

    static func seconds(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}

extension String {
    public var trimmingWhitespace: String {
        var characters = Substring(self)
        while characters.first?.isWhitespace == true { characters.removeFirst() }
        while characters.last?.isWhitespace == true { characters.removeLast() }
        return String(characters)
    }
}
