import BluetoothCore
import Dispatch
import Logging

// What the client does with each PDU the bearer delivers. Runs on the bearer's thread.
extension ATTClient {
    func receive(_ bytes: [UInt8]) {
        guard let first = bytes.first else {
            dropped(\.malformedPDUs, "malformedPDUs", "empty PDU dropped")
            return
        }
        let opcode = ATTOpcode(rawValue: first)
        // No PDU is longer than ATT_MTU (Vol 3 Part F 3.2.8): a longer one is invalid
        // whatever it holds, and its contents are not looked at.
        guard bytes.count <= receiveLimit else {
            receivedOversized(opcode, length: bytes.count)
            return
        }
        let pdu: ATTPDU
        do {
            pdu = try ATTPDU(decoding: bytes)
        } catch {
            dropped(\.malformedPDUs, "malformedPDUs", "malformed PDU dropped", ["opcode": "\(opcode)", "error": "\(error)", "bytes": .prefix(bytes)])
            rejected(opcode, error)
            return
        }
        switch pdu {
        case .handleValueNotification(let notification):
            deliver([ATTHandleValue(handle: notification.attributeHandle, value: notification.attributeValue, isIndication: false)])
        case .multipleHandleValueNotification(let notification):
            deliver(notification.handleLengthValueTupleList.map {
                ATTHandleValue(handle: $0.attributeHandle, value: $0.attributeValue, isIndication: false)
            })
        case .handleValueIndication(let indication):
            // Subscribers see the value before the server learns it arrived.
            deliver([ATTHandleValue(handle: indication.attributeHandle, value: indication.attributeValue, isIndication: true)])
            confirmIndication()
        default:
            if opcode.kind == .response {
                receivedResponse(opcode, .success(pdu))
            } else if let serverPDUHandler {
                serverPDUHandler(pdu)
            } else {
                dropped(\.ignoredPDUs, "ignoredPDUs", "PDU for a server dropped: none serves this bearer", ["opcode": "\(opcode)"])
            }
        }
    }

    /// A PDU longer than the ATT_MTU, whether it reached us or the layer below dropped it
    /// unread (then `opcode` is nil when not even its first octet arrived).
    func receivedOversized(_ opcode: ATTOpcode?, length: Int) {
        dropped(\.oversizedPDUs, "oversizedPDUs", "PDU longer than the ATT_MTU dropped", ["opcode": "\(opcode.map { "\($0)" } ?? "none")", "length": "\(length)"])
        guard let opcode else { return }
        rejected(opcode, .invalidValue(field: "PDU length over the ATT_MTU of \(receiveLimit)", value: length))
    }

    /// Counts a PDU dropped under `counter` (its name in the log line is `name`) and logs it:
    /// one warning each, with the running count.
    private func dropped(
        _ counter: WritableKeyPath<Statistics, Int>, _ name: String, _ message: Logger.Message, _ metadata: @autoclosure () -> Logger.Metadata = [:]
    ) {
        let count = state.withLock { state in
            state.statistics[keyPath: counter] += 1
            return state.statistics[keyPath: counter]
        }
        logger.droppedInput(message, counter: name, count: count, metadata: metadata())
    }

    /// The longest PDU the peer may send: the ATT_MTU, or while an Exchange MTU is settling
    /// what was offered, since the server may use the new MTU as soon as it has answered
    /// (before the exchanging task has resumed to record it).
    private var receiveLimit: Int {
        max(Int(bearer.mtu), Int(state.withLock { $0.mtuOffered ?? 0 }))
    }

    /// An invalid PDU: a response fails its request (the bearer stays), an indication is
    /// still confirmed, anything else is dropped. The caller has counted it.
    private func rejected(_ opcode: ATTOpcode, _ error: DecodeError) {
        switch opcode.kind {
        case .response:
            receivedResponse(opcode, .failure(error))
        case .indication:
            // The server waits for this confirmation; withholding it would only make its
            // transaction time out and cost the link 30 s later.
            confirmIndication()
        case .request, .command, nil:
            // A local server answers an invalid request with Invalid PDU and counts an
            // invalid command; without one, nobody answers either.
            server?.receiveInvalid(opcode)
        case .notification, .confirmation:
            break
        }
    }

    /// Completes the outstanding request with a response (or its decoding failure).
    private func receivedResponse(_ opcode: ATTOpcode, _ decoded: Result<ATTPDU, DecodeError>) {
        enum Outcome {
            case unsolicited(count: Int)
            case complete(Resumption?, next: Transaction?, agreedMTU: UInt16?)
            case violation(id: UInt64, request: ATTOpcode, received: ATTOpcode)
        }
        let outcome: Outcome = state.withLock { state in
            guard state.closedReason == nil, let inFlight = state.inFlight else {
                state.statistics.unsolicitedResponses += 1
                return .unsolicited(count: state.statistics.unsolicitedResponses)
            }
            let request = inFlight.request
            let result: WaitOutcome<ATTPDU, ATTError>
            switch decoded {
            case .failure(let error):
                guard opcode == request.responseOpcode || opcode == .errorResponse else {
                    return .violation(id: inFlight.id, request: request, received: opcode)
                }
                result = .failed(.malformedResponse(request: request, error))
            case .success(.errorResponse(let error)):
                // An Error Response about another request is as misplaced as a wrong opcode.
                guard error.requestOpcodeInError == request else {
                    return .violation(id: inFlight.id, request: request, received: opcode)
                }
                result = .failed(.errorResponse(request: request, handle: error.attributeHandleInError, code: error.errorCode))
            case .success(let pdu):
                guard opcode == request.responseOpcode else { return .violation(id: inFlight.id, request: request, received: opcode) }
                result = .value(pdu)
            }
            if let deadline = inFlight.deadline { DeadlineTimer.shared.cancel(deadline) }
            state.inFlight = nil
            // The server uses the agreed MTU from its answer on, whether or not anyone still
            // waits for it here: it is recorded now, not by the exchanging task.
            var agreedMTU: UInt16?
            if request == .exchangeMTURequest {
                if case let .value(response) = result, let offered = state.mtuOffered,
                   let answer = response.parameters(as: ExchangeMTUResponse.self) {
                    agreedMTU = Self.agreedMTU(offered: offered, server: answer.serverRxMTU)
                }
                state.mtuOffered = nil
            }
            // Nil when the caller was cancelled: the response only frees the bearer.
            let resumption = state.answers.fulfill(id: inFlight.id, with: result)
            return .complete(resumption, next: startNextTransaction(&state), agreedMTU: agreedMTU)
        }
        switch outcome {
        case let .unsolicited(count):
            logger.droppedInput("response with no request outstanding dropped", counter: "unsolicitedResponses", count: count, metadata: ["opcode": "\(opcode)"])
        case let .complete(resumption, next, agreedMTU):
            if let agreedMTU { bearer.mtuExchanged(agreedMTU) }
            if let next { sendForReader { self.transmit(next) } }
            resumption?.resume()
        case let .violation(id, request, received):
            logger.warning("response does not match the request: bearer closed", metadata: ["request": "\(request)", "received": "\(received)"])
            tearDown(
                .protocolViolation(request: request, received: received),
                closeBearer: true,
                inFlightError: .unexpectedResponse(request: request, received: received),
                onlyIfInFlight: id
            )
        }
    }

    private func confirmIndication() {
        guard state.withLock({ $0.closedReason == nil }) else { return }
        sendForReader {
            do throws(ATTBearerError) {
                try self.bearer.send(HandleValueConfirmation().encode())
                self.state.withLock { $0.statistics.indicationsConfirmed += 1 }
            } catch {
                self.tearDown(error, closeBearer: false)
            }
        }
    }

    /// Sends what reading called for (a confirmation, the next queued request): at once
    /// when the bearer's send never waits (our L2CAP), else on the client's own serial
    /// queue, in order, so a send the layer below holds back (the kernel's socket while it
    /// pairs, up to its timeout) stops neither the reading of what follows nor a thread of
    /// the tasks' pool (the kernel pairing agent's answer runs on that pool).
    private func sendForReader(_ send: @escaping @Sendable () -> Void) {
        if let readerSends { readerSends.async(execute: send) } else { send() }
    }

    /// Hands values to the subscribers of their handles, in subscription order.
    private func deliver(_ values: [ATTHandleValue]) {
        let targets: [[@Sendable (ATTHandleValue) -> Void]] = state.withLock { state in
            let ordered = state.subscribers.sorted { $0.key < $1.key }.map(\.value)
            return values.map { value in
                ordered.filter { $0.handle == nil || $0.handle == value.handle }.map(\.deliver)
            }
        }
        var delivered = 0
        for (value, handlers) in zip(values, targets) {
            for handler in handlers { handler(value) }
            delivered += handlers.count
        }
        let count = delivered
        state.withLock { $0.statistics.valuesDelivered += count }
    }
}
