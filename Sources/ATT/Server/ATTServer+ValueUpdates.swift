import BluetoothCore
import Dispatch

/// What an indication's caller waits for.
package enum IndicationWait: Hashable, Sendable {
    case confirmation
}

// Values the server sends on its own (Core 5.4 Vol 3 Part F 3.4.7). Notifications are the
// hot path: on a bearer whose send never waits (our L2CAP) no lock, no task, no allocation
// but the PDU's bytes, and when the layer below is at its bound the caller gets
// ``ATTServerError/outgoingQueueFull`` at once. On one whose send may wait (a kernel
// socket) they join the server's bounded send queue instead (`sendHostPDU`).
extension ATTServer {
    /// Sends a Handle Value Notification (3.4.7.1): the value, cut to ATT_MTU - 3 octets.
    public func notify(handle: UInt16, value: [UInt8]) throws(ATTServerError) {
        try sendHostPDU(Self.encode(.handleValueNotification, handle: handle, value: value, mtu: Int(bearer.mtu)))
    }

    /// Sends as many of `values` as fit the ATT_MTU, from the first, in order and whole, in
    /// one Multiple Handle Value Notification (3.4.7.4), and returns how many went; send
    /// the rest again. The PDU carries two or more values, as the specification asks:
    /// when the second does not fit beside the first, the first goes alone as a Handle Value
    /// Notification (cut to ATT_MTU - 3, as ``notify(handle:value:)`` does) and 1 is returned.
    /// Only to a client that enabled it (the store's ``ATTAttributeStore/acceptsMultipleNotifications(_:)``).
    @discardableResult
    public func notifyMultiple(_ values: [MultipleHandleValueNotification.HandleLengthValue]) throws(ATTServerError) -> Int {
        guard processor.store.acceptsMultipleNotifications(context) else { throw .multipleNotificationsNotEnabled }
        guard let first = values.first else { throw .nothingToSend }
        let mtu = Int(bearer.mtu)
        var length = 1, count = 0
        for value in values {
            guard length + 4 + value.attributeValue.count <= mtu else { break }
            length += 4 + value.attributeValue.count
            count += 1
        }
        guard count >= 2 else {
            try notify(handle: first.attributeHandle, value: first.attributeValue)
            return 1
        }
        var writer = ByteWriter(capacity: length)
        writer.write(ATTOpcode.multipleHandleValueNotification.rawValue)
        for value in values.prefix(count) {
            writer.write(value.attributeHandle)
            writer.write(UInt16(value.attributeValue.count))
            writer.write(contentsOf: value.attributeValue)
        }
        try sendHostPDU(writer.bytes)
        return count
    }

    /// Returns once everything sent so far (answers and notifications) has left for the
    /// layer below, or failed: then a refused notification may be sent again.
    public func waitUntilSent() async {
        guard let waitingSends else { return await bearer.waitUntilSent() }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            waitingSends.async { continuation.resume() }
        }
    }

    /// Sends a Handle Value Indication (3.4.7.2), the value cut to ATT_MTU - 3 octets, and
    /// returns once the client confirmed it.
    ///
    /// One indication is outstanding per bearer; later ones wait in a FIFO of
    /// ``Configuration/indicationQueueLimit`` (past it: ``ATTServerError/indicationQueueFull(limit:)``).
    /// No confirmation within ``Configuration/indicationTimeout`` (30 s) kills the bearer as a
    /// transaction timeout (3.3.3): this call throws ``ATTServerError/indicationTimedOut(timeout:)``,
    /// the queued ones ``ATTServerError/bearerClosed(_:)``. A cancelled caller returns at
    /// once; its indication is withdrawn if still queued, else stays outstanding until
    /// confirmed or timed out.
    public func indicate(handle: UInt16, value: [UInt8]) async throws(ATTServerError) {
        let bytes = Self.encode(.handleValueIndication, handle: handle, value: value, mtu: Int(bearer.mtu))
        let registered: Result<(id: UInt64, sendNow: Bool), ATTServerError> = state.withLock { state in
            if let reason = state.closedReason { return .failure(.bearerClosed(reason)) }
            if Task.isCancelled { return .failure(.cancelled) }
            if state.indicationInFlight == nil {
                let id = state.indications.expect(.confirmation)
                state.indicationInFlight = (id, armIndicationDeadline(id))
                return .success((id, true))
            }
            guard state.indicationQueue.count < configuration.indicationQueueLimit else {
                return .failure(.indicationQueueFull(limit: configuration.indicationQueueLimit))
            }
            let id = state.indications.expect(.confirmation)
            state.indicationQueue.append((id, bytes))
            return .success((id, false))
        }
        let (id, sendNow) = try registered.get()
        if sendNow { sendWhereItMayWait { self.transmitIndication(id: id, bytes: bytes) } }
        switch await wait(for: id, until: nil) {
        case .value: return
        case .failed(let error): throw error
        case .expired: throw .indicationTimedOut(timeout: configuration.indicationTimeout)
        case .cancelled: throw .cancelled
        }
    }

    /// The client confirmed the outstanding indication (on the bearer's thread).
    func confirmationReceived() {
        var unexpected: Int?
        let (resumption, next): (PendingAnswers<IndicationWait, Bool, ATTServerError>.Resumption?, (UInt64, [UInt8])?) =
            state.withLock { state in
                guard state.closedReason == nil, let inFlight = state.indicationInFlight else {
                    state.statistics.unexpectedConfirmations += 1
                    unexpected = state.statistics.unexpectedConfirmations
                    return (nil, nil)
                }
                DeadlineTimer.shared.cancel(inFlight.deadline)
                state.indicationInFlight = nil
                state.statistics.indicationsConfirmed += 1
                return (state.indications.fulfill(id: inFlight.id, with: .value(true)), startNextIndication(&state))
            }
        if let unexpected {
            logger.droppedInput("confirmation with no indication outstanding ignored", counter: "unexpectedConfirmations", count: unexpected)
        }
        resumption?.resume()
        if let (id, bytes) = next { sendWhereItMayWait { self.transmitIndication(id: id, bytes: bytes) } }
    }

    private func armIndicationDeadline(_ id: UInt64) -> DeadlineTimer.Token {
        DeadlineTimer.shared.schedule(after: configuration.indicationTimeout) { [weak self] in self?.indicationExpired(id) }
    }

    /// Moves the next queued indication to the wire when none is outstanding.
    private func startNextIndication(_ state: inout State) -> (UInt64, [UInt8])? {
        guard state.indicationInFlight == nil, state.closedReason == nil, !state.indicationQueue.isEmpty else { return nil }
        let next = state.indicationQueue.removeFirst()
        state.indicationInFlight = (next.id, armIndicationDeadline(next.id))
        return next
    }

    /// Sends the outstanding indication. When the layer below is full it fails with
    /// ``ATTServerError/outgoingQueueFull`` and the next queued one is tried.
    private func transmitIndication(id: UInt64, bytes: [UInt8]) {
        var current: (UInt64, [UInt8])? = (id, bytes)
        while let (id, bytes) = current {
            current = nil
            let sent: Bool
            do {
                sent = try bearer.sendUnlessFull(bytes)
            } catch {
                stop(error, closeLink: false)
                return
            }
            let resumption: PendingAnswers<IndicationWait, Bool, ATTServerError>.Resumption? = state.withLock { state in
                guard let inFlight = state.indicationInFlight, inFlight.id == id else { return nil }
                if sent {
                    state.statistics.indicationsSent += 1
                    return nil
                }
                DeadlineTimer.shared.cancel(inFlight.deadline)
                state.indicationInFlight = nil
                current = startNextIndication(&state)
                return state.indications.fulfill(id: id, with: .failed(.outgoingQueueFull))
            }
            resumption?.resume()
        }
    }

    private func indicationExpired(_ id: UInt64) {
        let expired = state.withLock { state in
            guard state.closedReason == nil, state.indicationInFlight?.id == id else { return false }
            state.statistics.indicationsTimedOut += 1
            return true
        }
        guard expired else { return }
        logger.warning("indication not confirmed in time: bearer closed", metadata: ["timeout": "\(configuration.indicationTimeout)"])
        stop(
            .transactionTimedOut(request: .handleValueIndication), closeLink: true,
            inFlightIndicationError: .indicationTimedOut(timeout: configuration.indicationTimeout))
    }

    /// A host PDU the caller may retry. On a bearer whose send never waits it goes to the
    /// layer below, or is refused without queueing when that is full. On one whose send
    /// may wait it joins `waitingSends` behind the answers made
    /// before it, so it cannot overtake one (a notification of a new value reaching the
    /// client before the read response with the old one, which the client would keep),
    /// and the caller does not wait for it: up to ``Configuration/waitingNotificationLimit``
    /// PDUs and ``Configuration/waitingNotificationBytes`` octets wait there, past them the
    /// caller gets ``ATTServerError/outgoingQueueFull``, as from L2CAP's bound.
    private func sendHostPDU(_ bytes: [UInt8]) throws(ATTServerError) {
        guard let waitingSends, DispatchQueue.getSpecific(key: Self.waitingSendsKey) == nil else {
            let sent: Bool
            do throws(ATTBearerError) { sent = try bearer.sendUnlessFull(bytes) } catch { throw .bearerClosed(error) }
            if !sent { throw .outgoingQueueFull }
            return
        }
        let admitted: Result<Void, ATTServerError> = state.withLock { state in
            if let reason = state.closedReason { return .failure(.bearerClosed(reason)) }
            let waiting = state.waitingNotifications
            guard waiting.count < configuration.waitingNotificationLimit,
                  waiting.bytes + bytes.count <= configuration.waitingNotificationBytes else { return .failure(.outgoingQueueFull) }
            state.waitingNotifications = (waiting.count + 1, waiting.bytes + bytes.count)
            return .success(())
        }
        try admitted.get()
        waitingSends.async {
            let failure: ATTBearerError?
            // Stopped meanwhile (an indication timed out): nothing more may go (3.3.3).
            if self.closedReason != nil {
                failure = nil
            } else {
                do throws(ATTBearerError) { try self.bearer.send(bytes); failure = nil } catch { failure = error }
            }
            self.state.withLock { $0.waitingNotifications.count -= 1; $0.waitingNotifications.bytes -= bytes.count }
            if let failure { self.stop(failure, closeLink: false) }
        }
    }

    /// Opcode, handle, and as much of the value as ATT_MTU - 3 allows, in one allocation.
    private static func encode(_ opcode: ATTOpcode, handle: UInt16, value: [UInt8], mtu: Int) -> [UInt8] {
        let count = min(value.count, max(0, mtu - 3))
        var writer = ByteWriter(capacity: 3 + count)
        writer.write(opcode.rawValue)
        writer.write(handle)
        writer.write(contentsOf: value[0..<count])
        return writer.bytes
    }
}

extension ATTServer: PendingAnswersOwner {
    package func withPendingAnswers<Result>(_ body: (inout PendingAnswers<IndicationWait, Bool, ATTServerError>) -> Result) -> Result {
        state.withLock { body(&$0.indications) }
    }

    /// A caller gave up: a queued indication is withdrawn; the outstanding one must still
    /// be confirmed before the next may go (3.4.7.2), so it keeps its place.
    package func waitCancelled(_ id: UInt64) {
        let resumption = state.withLock { state in
            state.indicationQueue.removeAll { $0.id == id }
            return state.indications.fulfill(id: id, with: .cancelled)
        }
        resumption?.resume()
    }
}
