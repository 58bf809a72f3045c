import ArgumentParser
import BluetoothCore
import ToolSupport
import Trace

struct Stats: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Sum a capture up per connection and per advertiser (btmon -a with the host's view).",
        discussion: """
            Per connection: ACL packets and bytes each way (the L2CAP bytes after the HCI ACL \
            header) and their rate over the connection's time in the capture, ATT transactions \
            (requests joined to their answers) with p50 and p99 round trip, notifications and \
            their rate, indications, ATT Error Responses by code, encryption changes and \
            pairing outcomes. Per advertiser: reports, RSSI range and the mean interval between \
            advertisements (scan responses left out). Streams: memory stays bounded whatever \
            the capture's size (256 connections and 1,024 advertisers are kept, the oldest \
            forgotten and counted past that; percentiles within 3 %).
            """
    )

    @Argument(help: "A btsnoop, pcap or pcapng file, or - for standard input.")
    var file: String

    @Flag(name: .long, help: "One JSON object instead of the text.")
    var json = false

    func run() throws {
        var decoder = TraceDecoder(withFields: false)
        var statistics = TraceStatistics()
        try readCapture(file) { record in statistics.add(decoder.decode(record)) }
        writeOut((json ? Self.json(statistics).text : Self.text(statistics)) + "\n")
    }

    static func time(_ microseconds: Int64) -> String {
        var bytes: [UInt8] = []
        WallClock.appendISO8601(microseconds &* 1000, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    static func seconds(_ microseconds: Int64) -> Double { Double(microseconds) / 1_000_000 }

    /// `count` per second over `microseconds`; nil over no time.
    static func rate(_ count: Int, _ microseconds: Int64) -> Double? {
        microseconds > 0 ? Double(count) / seconds(microseconds) : nil
    }

    static func decimal(_ value: Double?, _ places: Int) -> JSONValue {
        value.map { .decimal($0, places: places) } ?? .null
    }

    static func peerText(_ peer: DeviceAddress?) -> String { peer.map { "\($0)" } ?? "peer unknown (connected before the capture)" }

    // MARK: JSON

    static func json(_ statistics: TraceStatistics) -> JSONValue {
        .object([
            ("packets", .int(statistics.packets)),
            ("start", statistics.first.map { .string(time($0)) } ?? .null),
            ("end", statistics.last.map { .string(time($0)) } ?? .null),
            ("connections", .array(statistics.connections.map(connectionJSON))),
            ("advertisers", .array(statistics.advertisers.map(advertiserJSON))),
            ("forgottenConnections", .int(statistics.forgottenConnections)),
            ("forgottenAdvertisers", .int(statistics.forgottenAdvertisers)),
        ])
    }

    static func connectionJSON(_ connection: TraceStatistics.Connection) -> JSONValue {
        let duration = connection.duration
        func traffic(_ traffic: TraceStatistics.Traffic) -> JSONValue {
            .object([
                ("packets", .int(traffic.packets)), ("bytes", .int(traffic.bytes)),
                ("bytesPerSecond", decimal(rate(traffic.bytes, duration), 1)),
            ])
        }
        func microseconds(_ value: Int64?) -> JSONValue { value.map { .int(Int($0)) } ?? .null }
        let errorCodes: [JSONValue] = connection.attErrors.sorted { $0.key.rawValue < $1.key.rawValue }.map { code, count in
            .object([("code", .int(Int(code.rawValue))), ("name", .string(code.name)), ("count", .int(count))])
        }
        let att: JSONValue = .object([
            ("transactions", .int(connection.transactions.count)),
            ("p50Microseconds", microseconds(connection.transactions.percentile(0.5))),
            ("p99Microseconds", microseconds(connection.transactions.percentile(0.99))),
            ("notifications", .int(connection.notifications)),
            ("notificationsPerSecond", decimal(rate(connection.notifications, duration), 2)),
            ("indications", .int(connection.indications)),
            ("errors", .int(connection.attErrorCount)),
            ("errorCodes", .array(errorCodes)),
        ])
        let encryption: JSONValue = .object([
            ("enabled", .int(connection.encryptionEnabled)),
            ("failed", .int(connection.encryptionFailed)),
            ("keyRefreshes", .int(connection.keyRefreshes)),
        ])
        let failures: [JSONValue] = connection.pairingFailures.sorted { $0.key.rawValue < $1.key.rawValue }.map { reason, count in
            .object([("reason", .int(Int(reason.rawValue))), ("name", .string("\(reason)")), ("count", .int(count))])
        }
        let pairing: JSONValue = .object([
            ("attempts", .int(connection.pairingAttempts)),
            ("completed", .int(connection.pairingCompleted)),
            ("failed", .int(connection.pairingFailures.values.reduce(0, +))),
            ("unfinished", .int(connection.pairingUnfinished)),
            ("failures", .array(failures)),
        ])
        let reason: JSONValue = connection.disconnectReason.map { .string("\($0)") } ?? .null
        let address: JSONValue = connection.peer.map { .string($0.address.description) } ?? .null
        let addressType: JSONValue = connection.peer.map { .string($0.type.description) } ?? .null
        let members: [(String, JSONValue)] = [
            ("index", .int(Int(connection.index))),
            ("handle", .int(Int(connection.handle))),
            ("address", address),
            ("addressType", addressType),
            ("start", .string(time(connection.first))),
            ("end", .string(time(connection.last))),
            ("seconds", .decimal(seconds(duration), places: 6)),
            ("disconnectReason", reason),
            ("sent", traffic(connection.sent)),
            ("received", traffic(connection.received)),
            ("att", att),
            ("encryption", encryption),
            ("pairing", pairing),
        ]
        return .object(members)
    }

    static func advertiserJSON(_ advertiser: TraceStatistics.Advertiser) -> JSONValue {
        .object([
            ("index", .int(Int(advertiser.index))),
            ("address", .string(advertiser.address.description)),
            ("addressType", .string(advertiser.addressType.description)),
            ("reports", .int(advertiser.reports)),
            ("rssiMin", advertiser.rssiMinimum.map { .int(Int($0)) } ?? .null),
            ("rssiMax", advertiser.rssiMaximum.map { .int(Int($0)) } ?? .null),
            ("advertisements", .int(advertiser.advertisements)),
            ("meanIntervalMicroseconds", advertiser.meanInterval.map { .int(Int($0)) } ?? .null),
        ])
    }

    // MARK: Text

    static func text(_ statistics: TraceStatistics) -> String {
        var lines: [String] = []
        if let first = statistics.first, let last = statistics.last {
            lines.append("\(statistics.packets) packets, \(fixedPoint(seconds(elapsed(from: first, to: last)), places: 3)) s, \(time(first)) to \(time(last))")
        } else {
            lines.append("0 packets")
        }
        for connection in statistics.connections {
            let duration = connection.duration
            var head = "connection hci\(connection.index) handle \(connection.handle) \(peerText(connection.peer)), \(fixedPoint(seconds(duration), places: 3)) s"
            if let reason = connection.disconnectReason { head += ", ended: \(reason)" }
            lines.append(head)
            for (label, traffic) in [("sent", connection.sent), ("received", connection.received)] {
                let perSecond = rate(traffic.bytes, duration).map { ", \(fixedPoint($0, places: 1)) B/s" } ?? ""
                lines.append("  \(label.padding(to: 9)) \(traffic.packets) packets, \(traffic.bytes) bytes\(perSecond)")
            }
            let histogram = connection.transactions
            var att = "  ATT       \(histogram.count) transactions"
            if let p50 = histogram.percentile(0.5), let p99 = histogram.percentile(0.99) {
                att += " (round trip p50 \(milliseconds(p50)), p99 \(milliseconds(p99)))"
            }
            att += ", \(connection.notifications) notifications"
            if let perSecond = rate(connection.notifications, duration), connection.notifications > 0 { att += " (\(fixedPoint(perSecond, places: 2))/s)" }
            att += ", \(connection.indications) indications, \(connection.attErrorCount) errors"
            if !connection.attErrors.isEmpty {
                att += ": " + connection.attErrors.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key) x\($0.value)" }.joined(separator: ", ")
            }
            lines.append(att)
            var security = "  security  encryption on \(connection.encryptionEnabled), failed \(connection.encryptionFailed), key refreshes \(connection.keyRefreshes); "
            security += "pairing \(connection.pairingAttempts) attempts, \(connection.pairingCompleted) completed, \(connection.pairingFailures.values.reduce(0, +)) failed, \(connection.pairingUnfinished) unfinished"
            if !connection.pairingFailures.isEmpty {
                security += ": " + connection.pairingFailures.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key) x\($0.value)" }.joined(separator: ", ")
            }
            lines.append(security)
        }
        for advertiser in statistics.advertisers {
            var line = "advertiser hci\(advertiser.index) \(advertiser.address) (\(advertiser.addressType)): \(advertiser.reports) reports"
            if let low = advertiser.rssiMinimum, let high = advertiser.rssiMaximum { line += ", RSSI \(low) to \(high) dBm" }
            if let interval = advertiser.meanInterval { line += ", mean interval \(milliseconds(interval))" }
            lines.append(line)
        }
        if statistics.forgottenConnections > 0 || statistics.forgottenAdvertisers > 0 {
            lines.append("forgotten (tables full): \(statistics.forgottenConnections) connections, \(statistics.forgottenAdvertisers) advertisers")
        }
        return lines.joined(separator: "\n")
    }

    static func milliseconds(_ microseconds: Int64) -> String {
        "\(fixedPoint(Double(microseconds) / 1000, places: 3)) ms"
    }
}
