import ATT
import BluetoothCore

/// The ATT client as a hostile server's peer: every PDU the server may push unasked
/// (notifications, indications, responses to nothing, garbage) reaches it through a bearer
/// that delivers synchronously, so one input is one deterministic conversation.
enum ATTClientTarget {
    /// A bearer whose server is a list of replies: `receive` runs on the caller's thread,
    /// each request is answered from inside `send` with the next replies up to a response,
    /// and the link drops when the replies run out, so no input waits for a timeout. (TestSupport's
    /// ScriptedBearer checks expected requests and delivers on a queue instead.)
    final class DirectBearer: ATTBearer {
        struct State {
            var receive: (@Sendable ([UInt8]) -> Void)?
            var closed: (@Sendable (ATTBearerError) -> Void)?
            var replies: ArraySlice<[UInt8]>
            var sent: [[UInt8]] = []
            var isClosed = false
        }
        let state: Lock<State>

        init(replies: [[UInt8]] = []) { state = Lock(State(replies: replies[...])) }

        /// It only records (and answers in place): what the client sends because of what it
        /// read goes out at once, so an input's outcome is decided when it has been fed.
        var sendNeverWaits: Bool { true }

        func start(
            receive: @escaping @Sendable ([UInt8]) -> Void, oversized _: @escaping @Sendable (ATTOpcode?, Int) -> Void,
            closed: @escaping @Sendable (ATTBearerError) -> Void
        ) {
            state.withLock { $0.receive = receive; $0.closed = closed }
        }
        func send(_ pdu: [UInt8]) throws(ATTBearerError) {
            try state.withLock { state throws(ATTBearerError) in
                if state.isClosed { throw .closedByHost }
                state.sent.append(pdu)
            }
            guard ATTOpcode(rawValue: pdu.first ?? 0).kind == .request else { return }
            // The server may push anything before it answers; any response ends the
            // transaction (completed, failed, or a protocol violation that closes us).
            while true {
                let (reply, drop) = state.withLock { state -> ([UInt8]?, (@Sendable (ATTBearerError) -> Void)?) in
                    if state.isClosed { return (nil, nil) }
                    if let reply = state.replies.popFirst() { return (reply, nil) }
                    state.isClosed = true
                    return (nil, state.closed)
                }
                guard let reply else {
                    drop?(.disconnected(reason: 0x13))
                    return
                }
                deliver(reply)
                if ATTOpcode(rawValue: reply.first ?? 0).kind == .response { return }
            }
        }
        var mtu: UInt16 { 23 }
        var mtuIsNegotiatedBelow: Bool { false }
        func mtuExchanged(_ mtu: UInt16) {}
        func close(reason: ATTBearerError) { state.withLock { $0.isClosed = true } }

        func deliver(_ pdu: [UInt8]) { state.withLock { $0.receive }?(pdu) }
    }

    @Sendable static func client(_ bytes: [UInt8]) {
        let bearer = DirectBearer()
        let client = ATTClient(bearer: bearer)
        let delivered = Lock(0)
        let subscription = client.addValueHandler { _ in delivered.withLock { $0 += 1 } }
        var indications = 0
        var pdus = 0
        for pdu in FuzzPieces(bytes) {
            pdus += 1
            // Malformed indications are confirmed too (ATTClient+Receive: withholding it
            // only makes the server time out).
            if pdu.first == ATTOpcode.handleValueIndication.rawValue { indications += 1 }
            bearer.deliver(pdu)
        }
        let confirmations = bearer.state.withLock { $0.sent.filter { $0 == [ATTOpcode.handleValueConfirmation.rawValue] }.count }
        let statistics = client.statistics
        expect(confirmations == indications, "\(indications) indications, \(confirmations) confirmations")
        // A malformed response with no request waiting counts as malformed and unsolicited.
        expect(max(statistics.malformedPDUs, statistics.unsolicitedResponses + statistics.ignoredPDUs) <= pdus,
               "more PDUs counted than received: \(statistics)")
        expect(delivered.withLock { $0 } == statistics.valuesDelivered, "handler saw a different count than the statistics")
        subscription.cancel()
        client.close()
    }
}
