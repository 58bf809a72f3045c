import ANCS
import ANCSConsumer
import ToolSupport

/// The commands `run` takes on stdin, one per line: `positive UID`, `negative UID`,
/// `media COMMAND` (play, pause, toggle, next, previous, volume-up, volume-down, ...).
struct StdinControl {
    let consumer: ANCSConsumer
    let lines: EventLines

    /// Reads until stdin closes (the run goes on) or the task is cancelled.
    func run() async {
        await TerminalInput.shared.commands(perform)
    }

    private func perform(_ command: String) async {
        let words = command.split(separator: " ").map(String.init)
        guard let verb = words.first else { return }
        switch (verb, words.count) {
        case ("positive", 2), ("negative", 2):
            guard let uid = UInt32(words[1]) else { return fail(command, "\(words[1]) is not a notification UID") }
            guard consumer.perform(verb == "positive" ? .positive : .negative, uid: uid) else {
                return fail(command, "no phone is connected with notifications subscribed")
            }
        case ("media", 2):
            guard let remote = AMSRemoteCommand(name: words[1]) else {
                return fail(command, "media commands: \(AMSRemoteCommand.allCases.map(\.name).joined(separator: ", "))")
            }
            do {
                try await consumer.media(remote)
                lines.line([("event", .string("sent")), ("command", .string(command))], text: "media \(remote.name) sent")
            } catch {
                fail(command, error.description)
            }
        default:
            fail(command, "commands: positive UID, negative UID, media play|pause|toggle|next|previous|volume-up|volume-down")
        }
    }

    private func fail(_ command: String, _ why: String) {
        lines.line([("event", .string("error")), ("command", .string(command)), ("error", .string(why))], text: "\(command): \(why)")
    }
}
