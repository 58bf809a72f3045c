import ATT
import BareBLE
import BluetoothCore
import GATT
import ToolSupport

/// What the server saw, one line per event: JSON for programs, a sentence on a terminal.
struct EventOutput: Sendable {
    let json: Bool

    func line(_ members: KeyValuePairs<String, JSONValue>, text: String) {
        writeOut((json ? JSONValue.object(members.map { ($0.key, $0.value) }).text : text) + "\n")
    }

    func write(_ event: PeripheralManagerEvent) {
        switch event {
        case let .host(.connected(link)):
            line(["event": .string("connected"), "central": .string(link.address.description), "handle": .int(Int(link.handle))],
                 text: "\(link) connected")
        case let .host(.disconnected(link, reason)):
            line(["event": .string("disconnected"), "central": .string(link.address.description), "handle": .int(Int(link.handle)),
                  "reason": .int(Int(reason.rawValue))],
                 text: "\(link) disconnected: \(reason)")
        case let .host(.paired(link, keys, saved)):
            line(["event": .string("paired"), "central": .string(link.identity.description), "method": .string(keys.method),
                  "secureConnections": .bool(keys.secureConnections), "authenticated": .bool(keys.authenticated), "bondSaved": .bool(saved)],
                 text: "\(link) paired: \(keys)" + (saved ? ", bond saved" : ""))
        case let .host(.pairingFailed(link, error)):
            line(["event": .string("pairing-failed"), "central": .string(link.address.description), "error": .string("\(error)")],
                 text: "\(link): pairing failed: \(error)")
        case let .host(.encryptionChanged(link, encrypted)):
            line(["event": .string("encrypted"), "central": .string(link.identity.description), "encrypted": .bool(encrypted)],
                 text: "\(link) \(encrypted ? "encrypted" : "no longer encrypted")")
        case let .host(.advertisingFailed(error)):
            line(["event": .string("advertising-failed"), "error": .string("\(error)")], text: "advertising failed: \(error)")
        case let .host(.refused(address, why)):
            line(["event": .string("refused"), "central": .string(address.description), "why": .string(why)], text: "refused \(address): \(why)")
        case .host(.advertising), .host(.advertisingStopped), .host(.mtuChanged):
            break
        case let .mtu(request, mtu):
            line(["event": .string("mtu"), "handle": .int(Int(request.bearer)), "mtu": .int(Int(mtu))], text: "link \(request.bearer): ATT MTU \(mtu)")
        case let .read(request):
            line(request.members("read"), text: "\(request.text) read")
        case let .wrote(request, value, withResponse):
            line(request.members("write") + [("value", .string(Hex.string(value))), ("withResponse", .bool(withResponse))],
                 text: "\(request.text) written: \(Hex.string(value))\(withResponse ? "" : " (without response)")")
        case let .subscribed(request, configuration):
            let kind = configuration.contains(.notification) ? "notifications" : "indications"
            line(request.members("subscribed") + [("kind", .string(kind))], text: "\(request.text) subscribed to \(kind)")
        case let .unsubscribed(request):
            line(request.members("unsubscribed"), text: "\(request.text) unsubscribed")
        case let .serviceChanged(request, range, confirmed):
            line([("event", .string("service-changed")), ("handle", .int(Int(request.bearer))), ("start", .int(Int(range.lowerBound))),
                  ("end", .int(Int(range.upperBound))), ("confirmed", .bool(confirmed))],
                 text: "link \(request.bearer): Service Changed \(handleText(range.lowerBound))-\(handleText(range.upperBound)) \(confirmed ? "confirmed" : "not confirmed")")
        case .readyToUpdateSubscribers:
            line(["event": .string("ready")], text: "the centrals' queues have room again")
        }
    }

    func line(_ members: [(String, JSONValue)], text: String) {
        writeOut((json ? JSONValue.object(members).text : text) + "\n")
    }
}

extension PeripheralManager.Request {
    func members(_ event: String) -> [(String, JSONValue)] {
        [("event", .string(event)), ("handle", .int(Int(bearer))), ("central", central.map { .string($0.description) } ?? .null),
         ("attribute", .int(Int(handle))), ("uuid", characteristic.map { .string($0.description) } ?? .null)]
    }

    var text: String {
        "link \(bearer): \(characteristic.map { "\($0) " } ?? "")[\(handleText(handle))]"
    }
}
