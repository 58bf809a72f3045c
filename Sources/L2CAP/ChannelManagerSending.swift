import HCI

// Outgoing data: fragmentation, credits and fairness.
//
// Fairness: one pump serves every connection. It hands the driver one fragment at a time,
// taking connections round-robin (the connection just served goes to the back of the
// line once the driver has taken its fragment), and asks for the next fragment only after
// the driver took the previous one. A long PDU on one link therefore delays another link's
// PDU by at most one fragment per credit, instead of by its whole length; and because
// L2CAP never has more than one packet waiting in the driver, the driver's FIFO cannot
// undo that order. Fragments of one connection stay in PDU order, as the continuation flag
// requires.
//
// The pump is not a task: it runs on whichever thread holds its place. The thread that
// queues a PDU sends while the driver has credits; the fragment that finds none waits in
// the driver, which sends it on the reader thread when Number Of Completed Packets brings
// a credit back, and the pump goes on there. A stream of notifications therefore costs no
// task and no thread wake-up beyond the reader's.

extension ChannelManager {
    /// Sends one SDU on `channel` as a B-frame, fragmented to the controller's ACL data
    /// length. Returns once its last fragment is in the controller; fails at once with
    /// ``L2CAPError/disconnected(reason:)`` if the link ends first, and with
    /// ``L2CAPError/outgoingQueueFull(queuedPDUs:queuedBytes:)`` when the connection
    /// already holds ``OutgoingLimit`` worth of the host's PDUs (the controller is not
    /// returning credits): wait for earlier sends before trying again.
    ///
    /// There is no deadline here on purpose: the wait ends with the credit, the link or the
    /// transport, and the protocols above (ATT, SMP) bound their transactions with their
    /// own 30 s timers.
    public func send(_ payload: [UInt8], cid channel: ChannelIdentifier, connection handle: UInt16) async throws(L2CAPError) {
        try await send(payload, cid: channel, handle: handle, serial: nil)
    }

    /// ``send(_:cid:connection:)`` on the channel of `registration`, on its connection only:
    /// once that link is gone this fails with ``L2CAPError/unknownConnection(handle:)``,
    /// even after the controller gave its handle to a new link.
    public func send(_ payload: [UInt8], on registration: ChannelRegistration) async throws(L2CAPError) {
        try await send(payload, cid: registration.channel, handle: registration.handle, serial: registration.serial)
    }

    private func send(_ payload: [UInt8], cid channel: ChannelIdentifier, handle: UInt16, serial: UInt64?) async throws(L2CAPError) {
        let result: Result<Void, L2CAPError> = await withCheckedContinuation { continuation in
            enqueue(BasicFrame(channelID: channel, payload: payload), handle: handle, serial: serial) { continuation.resume(returning: $0) }
        }
        try result.get()
    }

    /// Queues a frame without waiting; `completion` (if any) reports the outcome. An
    /// answer dropped at its bound reports nothing: it was counted, and the peer's own
    /// timer deals with the missing answer.
    func enqueue(
        _ frame: BasicFrame, origin: OutgoingOrigin = .host, handle: UInt16, serial: UInt64? = nil, completion: OutgoingPDU.Completion?
    ) {
        if case let .refused(error) = enqueueAndSend(frame, origin: origin, handle: handle, serial: serial, completion: completion) {
            completion?(.failure(error))
        }
    }

    /// Queues a frame; one that fits one ACL packet, when no pump is running, is sent on
    /// this thread if the driver has a credit at once (``pump()``). A longer one's
    /// fragments take turns with other connections' as credits come back, from a pump
    /// started on a task of its own.
    func enqueueAndSend(
        _ frame: BasicFrame, origin: OutgoingOrigin, handle: UInt16, serial: UInt64? = nil, completion: OutgoingPDU.Completion?
    ) -> EnqueueOutcome {
        let onePacket = BasicFrameHeader.size + frame.payload.count <= controller.aclPacketLength
        let (outcome, claimed) = state.withLock { state in
            let outcome = enqueueLocked(frame, origin: origin, handle: handle, serial: serial, completion: completion, startingPump: !onePacket, state: &state)
            guard onePacket, outcome == .queued, !state.pumpRunning else { return (outcome, false) }
            state.pumpRunning = true
            return (outcome, true)
        }
        if claimed { pump() }
        return outcome
    }

    /// Queues a frame while the lock is held (so signaling answers keep the order of the
    /// commands they answer) and, `startingPump`, starts the pump task if it is idle.
    /// `serial`, when given, must be the connection's (``ChannelRegistration``): a frame
    /// meant for a link that is gone never goes to the next one given its handle.
    func enqueueLocked(
        _ frame: BasicFrame, origin: OutgoingOrigin, handle: UInt16, serial: UInt64? = nil, completion: OutgoingPDU.Completion?,
        startingPump: Bool = true, state: inout State
    ) -> EnqueueOutcome {
        if let serial, state.connections[handle]?.serial != serial { return .refused(.unknownConnection(handle: handle)) }
        guard frame.payload.count <= BasicFrame.maximumPayloadLength else {
            return .refused(.payloadTooLarge(size: frame.payload.count, maximum: BasicFrame.maximumPayloadLength))
        }
        // Asked in place: a copy of the queue kept alive here would make the append below
        // copy the whole queue.
        let limit = configuration.outgoingLimit
        guard let admitted = state.withConnection(handle, { $0.outgoing.admits(origin, payloadBytes: frame.payload.count, under: limit) }) else {
            return .refused(.unknownConnection(handle: handle))
        }
        guard admitted else {
            switch origin {
            case .answer:
                state.statistics.answersDroppedForFullQueue += 1
                // Under the lock: the answer's caller holds it; a flood logs a handful of lines.
                logger.droppedForOverflow(
                    "answer to the peer dropped: the outgoing queue is full", counter: "answersDroppedForFullQueue",
                    count: state.statistics.answersDroppedForFullQueue, metadata: ["handle": .hex(handle)])
                return .answerDropped
            case .host:
                state.statistics.sendsRefusedForFullQueue += 1
                let queued = state.connections[handle]?.outgoing
                return .refused(.outgoingQueueFull(queuedPDUs: queued?.hostPDUs ?? 0, queuedBytes: queued?.hostBytes ?? 0))
            }
        }
        let length = controller.aclPacketLength
        guard length > 0 else { return .refused(.controllerNotReady) }
        let pdu = OutgoingPDU(
            id: state.makeID(), frame: frame.encode(), connectionHandle: handle, fragmentLength: length, origin: origin,
            payloadBytes: frame.payload.count, completion: completion)
        state.withConnection(handle) { $0.outgoing.append(pdu) }
        if !state.readyOrder.contains(handle) { state.readyOrder.append(handle) }
        if startingPump, !state.pumpRunning {
            state.pumpRunning = true
            // Created under the lock but runs later, on its own: it takes the lock itself.
            Task { self.pump() }
        }
        return .queued
    }

    typealias Fragment = (handle: UInt16, pduID: UInt64, packet: ACLDataPacket)

    /// The one sender, on the thread that holds its place: hands the driver fragments while
    /// it has credits, and stops when no connection has any left. The first fragment that
    /// must wait for a credit waits in the driver, which sends it when the credit comes
    /// back and goes on with this from there.
    private func pump() {
        var next = nextFragment()
        while let fragment = next {
            let sentNow: Result<Bool, HCIError>
            do throws(HCIError) {
                // Without a completion first: a fragment that finds its credit allocates none.
                if try controller.sendACLIfCreditFree(fragment.packet) {
                    sentNow = .success(true)
                } else {
                    sentNow = .success(try controller.sendACL(fragment.packet) { [self] result in
                        if settle(fragment, result) { pump() }
                    })
                }
            } catch {
                sentNow = .failure(error)
            }
            if case .success(false) = sentNow { return }
            guard settle(fragment, sentNow.map { _ in }) else { return }
            next = nextFragment()
        }
    }

    /// What became of `fragment`; false when the pump must stop because the transport
    /// closed (everything queued has failed). A link that ended takes only its own
    /// fragments with it: L2CAP fails its PDUs when the Disconnection Complete reaches it.
    private func settle(_ fragment: Fragment, _ result: Result<Void, HCIError>) -> Bool {
        switch result {
        case .success:
            fragmentSent(fragment)?.completion?(.success(()))
            return true
        case .failure(.disconnected):
            return true
        case .failure(let error):
            failAllOutgoing(.controller(error))
            return false
        }
    }

    /// `fragment` is in the controller: its connection goes to the back of the line, and
    /// its PDU, when that was the last fragment, is taken off the queue and returned (the
    /// PDU rather than its completion: a closure returned through the generic lock and
    /// connection accessors would be boxed in a new thunk every time).
    private func fragmentSent(_ next: Fragment) -> OutgoingPDU? {
        state.withLock { state in
            // The link may have ended (or its handle been reused) meanwhile: then the PDU
            // was already failed and is not at the head any more.
            guard let (sent, more) = state.withConnection(next.handle, { connection in
                (connection.outgoing.removeFirst(ifHanded: next.pduID), connection.outgoing.hasUnsentFragments)
            }) else { return nil }
            // Back of the line only now, so a connection that became ready while this
            // fragment waited for its credit is served before this one's next fragment.
            if more, !state.readyOrder.contains(next.handle) { state.readyOrder.append(next.handle) }
            return sent
        }
    }

    private func nextFragment() -> Fragment? {
        state.withLock { state in
            while !state.readyOrder.isEmpty {
                let handle = state.readyOrder.removeFirst()
                guard let next = state.withConnection(handle, { $0.outgoing.takeNextFragment() }) ?? nil else { continue }
                return (handle, next.pduID, next.packet)
            }
            state.pumpRunning = false
            return nil
        }
    }

    /// The driver refused a packet (its transport is closed): nothing queued can be sent.
    private func failAllOutgoing(_ error: L2CAPError) {
        let completions: [OutgoingPDU.Completion] = state.withLock { state in
            var completions: [OutgoingPDU.Completion] = []
            for handle in state.connections.keys {
                completions += state.connections[handle]?.outgoing.removeAll() ?? []
            }
            state.readyOrder = []
            state.pumpRunning = false
            return completions
        }
        for completion in completions { completion(.failure(error)) }
    }
}
