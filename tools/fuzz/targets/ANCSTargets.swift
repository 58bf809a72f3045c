import ANCS

/// An ``ANCSSession`` driven by a script of length-prefixed pieces: the first octet of
/// each picks the input (Notification Source, Data Source, a write result, the clock
/// moving, a user's action, the link going), the rest is its payload. A small queue bound
/// so the fuzzer reaches it. Invariants: the bound holds, at most one Control Point write
/// per input and only while none is unanswered, every write is a command the session
/// knows, a deadline exactly while a command is in flight.
enum ANCSTargets {
    @Sendable static func session(_ bytes: [UInt8]) {
        var session = ANCSSession(
            configuration: ANCSSessionConfiguration(titleLength: 16, subtitleLength: 8, messageLength: 64, maximumPendingNotifications: 8, maximumPendingActions: 2),
            appNames: AppNameCache(capacity: 2)
        )
        var now: UInt64 = 0
        var unanswered = 0
        for piece in FuzzPieces(bytes) {
            guard let selector = piece.first else { continue }
            let payload = Array(piece.dropFirst())
            let input: ANCSSessionInput
            switch selector % 6 {
            case 0: input = .notificationSource(payload)
            case 1: input = .dataSource(payload)
            case 2: input = payload.count == 2 ? .controlPointWriteFailed(reason: "\(payload)") : .controlPointWriteResult(attErrorCode: payload.first)
            case 3:
                now &+= UInt64(payload.first ?? 0) * 500_000_000
                input = .tick
            case 4: input = .performAction(uid: UInt32(payload.first ?? 0), action: payload.count > 1 ? .negative : .positive)
            default: input = .disconnected
            }
            switch input {
            case .controlPointWriteResult, .controlPointWriteFailed: if unanswered > 0 { unanswered -= 1 }
            default: break
            }
            let outputs = session.handle(input, now: now)
            let writes = outputs.compactMap { if case let .writeControlPoint(value) = $0 { value } else { nil } }
            expect(writes.count <= 1, "\(writes.count) writes for one input")
            unanswered += writes.count
            expect(unanswered <= 1, "a write sent while another was unanswered")
            for write in writes { expect((0...2).contains(write.first ?? 9), "write \(write) is no ANCS command") }
            expect(session.pendingNotifications <= 8, "\(session.pendingNotifications) notifications pending past the bound")
            expect(session.appNames.count <= 2, "app name cache past its capacity")
        }
    }
}
