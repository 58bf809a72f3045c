import HCI

// Outgoing data: fragmentation, credits and fairness.
//
// Fairness: one pump serves every connection. It hands the driver one fragment at a time,
// taking connections round-robin (the connection just served goes to the back of the
// line once the driver has taken its fragment), and asks for the next fragment only after the driver took the previous one. A long
// PDU on one link therefore delays another link's PDU by at most one fragment per credit,
// instead of by its whole length; and because L2CAP never has more than one packet waiting
// in the driver, the driver's FIFO cannot undo that order. Fragments of one connection stay
// in PDU order, as the continuation flag requires.

extension ChannelManager {
    /// Sends one SDU on `channel` as a B-frame, fragmented to the controller's ACL data
    /// length. Returns once its last fragment is in the controller; fails at once with
    /// ``L2CAPError/disconnected(reason:)`` if the link ends first.
    ///
    /// There is no deadline here on purpose: the wait ends with the credit, the link or the
    /// transport, and the protocols above (ATT, SMP) bound their transactions with their
    /// own 30 s timers.
    public func send(_ payload: [UInt8], cid channel: ChannelIdentifier, connection handle: UInt16) async throws(L2CAPError) {
        let result: Result<Void, L2CAPError> = await withCheckedContinuation { continuation in
            enqueue(BasicFrame(channelID: channel, payload: payload), handle: handle) { continuation.resume(returning: $0) }
        }
        try result.get()
    }

    /// Queues a frame without waiting; `completion` (if any) reports the outcome.
    func enqueue(_ frame: BasicFrame, handle: UInt16, completion: OutgoingPDU.Completion?) {
        let failure = state.withLock { enqueueLocked(frame, handle: handle, completion: completion, state: &$0) }
        if let failure { completion?(.failure(failure)) }
    }

    /// Queues a frame while the lock is held (so signaling answers keep the order of the
    /// commands they answer) and starts the pump if it is idle. Returns why it could not.
    func enqueueLocked(_ frame: BasicFrame, handle: UInt16, completion: OutgoingPDU.Completion?, state: inout State) -> L2CAPError? {
        guard frame.payload.count <= BasicFrame.maximumPayloadLength else {
            return .payloadTooLarge(size: frame.payload.count, maximum: BasicFrame.maximumPayloadLength)
        }
        guard state.connections[handle] != nil else { return .unknownConnection(handle: handle) }
        // The driver's lock is never held while it calls into L2CAP, so taking it here
        // cannot deadlock.
        guard let length = controller.info?.aclBuffer.packetLength, length > 0 else { return .controllerNotReady }
        let fragments = ACLFragmentation.fragments(of: frame, connectionHandle: handle, maximumLength: length)
        let id = state.makeID()
        state.connections[handle]?.outgoing.append(OutgoingPDU(id: id, fragments: fragments, completion: completion))
        if !state.readyOrder.contains(handle) { state.readyOrder.append(handle) }
        if !state.pumpRunning {
            state.pumpRunning = true
            // Created under the lock but runs later, on its own: it takes the lock itself.
            Task { await self.pump() }
        }
        return nil
    }

    /// The one sender: runs while any connection has fragments, then stops.
    private func pump() async {
        while let next = nextFragment() {
            do {
                try await controller.sendACL(next.packet)
            } catch {
                failAllOutgoing(.controller(error))
                return
            }
            let completion: OutgoingPDU.Completion? = state.withLock { state in
                // Back of the line only now, so a connection that became ready while this
                // fragment waited for its credit is served before this one's next fragment.
                if state.connections[next.handle]?.hasUnsentFragments == true, !state.readyOrder.contains(next.handle) {
                    state.readyOrder.append(next.handle)
                }
                // The link may have ended (or its handle been reused) meanwhile: then the
                // PDU was already failed and is not at the head any more.
                guard let head = state.connections[next.handle]?.outgoing.first, head.id == next.pduID,
                      !head.hasUnsentFragments
                else { return nil }
                state.connections[next.handle]?.outgoing.removeFirst()
                return head.completion
            }
            completion?(.success(()))
        }
    }

    private func nextFragment() -> (handle: UInt16, pduID: UInt64, packet: ACLDataPacket)? {
        state.withLock { state in
            while !state.readyOrder.isEmpty {
                let handle = state.readyOrder.removeFirst()
                guard let connection = state.connections[handle],
                      let index = connection.outgoing.firstIndex(where: \.hasUnsentFragments)
                else { continue }
                let pdu = connection.outgoing[index]
                let packet = pdu.fragments[pdu.nextFragment]
                state.connections[handle]?.outgoing[index].nextFragment += 1
                return (handle, pdu.id, packet)
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
                completions += state.connections[handle]?.outgoing.compactMap(\.completion) ?? []
                state.connections[handle]?.outgoing = []
            }
            state.readyOrder = []
            state.pumpRunning = false
            return completions
        }
        for completion in completions { completion(.failure(error)) }
    }
}
