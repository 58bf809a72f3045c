import ANCS
import ANCSConsumer
import BluetoothCore
import ToolSupport

/// One line per consumer event: a JSON object for programs, a sentence on a terminal.
struct EventLines: Sendable {
    let json: Bool

    /// The text form is one line of ours around the phone's words (titles, messages, app
    /// and track names), which may carry control characters: shown escaped.
    func line(_ members: [(String, JSONValue)], text: String) {
        writeOut((json ? JSONValue.object(members).text : TerminalText.printable(text)) + "\n")
    }

    func write(_ event: ANCSConsumerEvent) {
        switch event {
        case let .advertising(address):
            line([("event", .string("advertising")), ("address", .string(address.description))], text: "advertising from \(address)")
        case let .connected(address, identity):
            line([("event", .string("connected")), ("address", .string(address.description)), ("identity", .string(identity.description))],
                 text: "phone \(address) connected" + (identity != address ? " (bonded as \(identity))" : ""))
        case let .paired(identity, bonded):
            line([("event", .string("paired")), ("identity", .string(identity.description)), ("bonded", .bool(bonded))],
                 text: "paired with \(identity)" + (bonded ? ", bond saved" : ""))
        case let .pairingFailed(identity, reason):
            line([("event", .string("pairing-failed")), ("identity", .string(identity.description)), ("error", .string(reason))],
                 text: "pairing with \(identity) failed: \(reason)")
        case let .encrypted(identity):
            line([("event", .string("encrypted")), ("identity", .string(identity.description))], text: "link to \(identity) encrypted")
        case let .subscribed(identity, media):
            line([("event", .string("subscribed")), ("identity", .string(identity.description)), ("media", .bool(media))],
                 text: "receiving notifications from \(identity)" + (media ? " (and its media)" : ""))
        case let .notification(notification):
            line(Self.members(notification), text: Self.text(notification))
        case let .actionFinished(uid, action, failure):
            line([("event", .string("action")), ("uid", .int(Int(uid))), ("action", .string(action == .positive ? "positive" : "negative")),
                  ("error", failure.map { .string("\($0)") } ?? .null)],
                 text: "\(action == .positive ? "positive" : "negative") action on \(uid): " + (failure.map { "failed: \($0)" } ?? "done"))
        case let .problem(problem):
            line([("event", .string("problem")), ("error", .string(problem.description))], text: "problem: \(problem)")
        case let .linkFailed(identity, error):
            line([("event", .string("link-failed")), ("identity", .string(identity.description)), ("error", .string(error.description))],
                 text: "\(identity): \(error)")
        case let .mediaCommands(commands):
            line([("event", .string("media-commands")), ("commands", .array(commands.map { .string($0.name) }))],
                 text: "media commands: \(commands.map(\.name).joined(separator: " "))")
        case let .nowPlaying(playing):
            line(Self.members(playing), text: Self.text(playing))
        case let .disconnected(address, identity, reason):
            line([("event", .string("disconnected")), ("address", .string(address.description)), ("identity", .string(identity.description)),
                  ("reason", .string(reason))],
                 text: "phone \(identity) disconnected: \(reason)")
        }
    }

    static func members(_ notification: ANCSNotification) -> [(String, JSONValue)] {
        let event = notification.event
        let attributes = notification.attributes
        func text(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }
        var members: [(String, JSONValue)] = [
            ("event", .string("notification")), ("kind", .string(event.kind.name)), ("uid", .int(Int(event.uid))),
            ("category", .string(event.category.description)), ("categoryCount", .int(Int(event.categoryCount))),
            ("flags", .array(event.flags.names.map(JSONValue.string))),
        ]
        guard event.kind != .removed else { return members }
        members += [
            ("app", text(attributes?.appIdentifier)), ("appName", text(notification.appName)),
            ("title", text(attributes?.title)), ("subtitle", text(attributes?.subtitle)), ("message", text(attributes?.message)),
            ("messageSize", attributes?.messageSize.map(JSONValue.int) ?? .null), ("date", text(attributes?.date?.description)),
            ("positiveAction", text(attributes?.positiveActionLabel)), ("negativeAction", text(attributes?.negativeActionLabel)),
        ]
        if let failure = notification.fetchFailure { members.append(("error", .string(failure.description))) }
        return members
    }

    static func text(_ notification: ANCSNotification) -> String {
        let event = notification.event
        let head = "[\(event.uid)] \(event.kind.name) \(event.category)"
        guard event.kind != .removed else { return head }
        guard let attributes = notification.attributes else {
            return head + (notification.fetchFailure.map { ": \($0)" } ?? "")
        }
        var parts = [notification.appName ?? attributes.appIdentifier ?? "?"]
        if let title = attributes.title, !title.isEmpty { parts.append(title) }
        if let subtitle = attributes.subtitle, !subtitle.isEmpty { parts.append(subtitle) }
        var line = head + " " + parts.joined(separator: " | ")
        if let message = attributes.message, !message.isEmpty { line += ": " + message }
        let actions = [attributes.positiveActionLabel.map { "positive=\($0)" }, attributes.negativeActionLabel.map { "negative=\($0)" }]
            .compactMap { $0 }.filter { !$0.hasSuffix("=") }
        if !actions.isEmpty { line += " (" + actions.joined(separator: ", ") + ")" }
        return line
    }

    static func members(_ playing: AMSNowPlaying) -> [(String, JSONValue)] {
        func text(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }
        func number(_ value: Double?) -> JSONValue { value.map { .decimal($0, places: 3) } ?? .null }
        return [
            ("event", .string("media")), ("player", text(playing.playerName)), ("state", text(playing.playbackInfo?.state.name)),
            ("title", text(playing.title)), ("artist", text(playing.artist)), ("album", text(playing.album)),
            ("elapsed", number(playing.playbackInfo?.elapsed)), ("duration", number(playing.duration)), ("volume", number(playing.volume)),
        ]
    }

    static func text(_ playing: AMSNowPlaying) -> String {
        let track = [playing.artist, playing.title].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: " - ")
        return "media: \(playing.playbackInfo?.state.name ?? "?") \(track.isEmpty ? "(nothing)" : track)"
            + (playing.album.map { $0.isEmpty ? "" : " [\($0)]" } ?? "")
    }
}
