import BluetoothCore
import HCI

// The LE signaling channel (Core Vol 3 Part A 4): answers the peer's commands and runs our
// own connection parameter update request as a peripheral.

extension ChannelManager {
    func receiveSignaling(_ payload: [UInt8], handle: UInt16) {
        let command: SignalingCommand
        do {
            command = try SignalingCommand(decoding: payload)
        } catch {
            let count = state.withLock { state in
                state.statistics.malformedSignalingCommands += 1
                // Answer only what is recognisably a request, so a garbled reject of ours
                // coming back can never start a reject loop.
                if payload.count >= 2, payload[1] != 0,
                   !SignalingCode.responsesAndIndications.contains(SignalingCode(rawValue: payload[0])) {
                    reject(.commandNotUnderstood, identifier: payload[1], handle: handle, state: &state)
                }
                return state.statistics.malformedSignalingCommands
            }
            logMalformedSignaling(payload, handle: handle, count: count)
            return
        }
        guard command.identifier != 0 else {
            let count = state.withLock { state in
                state.statistics.zeroIdentifierCommands += 1
                return state.statistics.zeroIdentifierCommands
            }
            logger.droppedInput(
                "signaling command with identifier 0 dropped", counter: "zeroIdentifierCommands", count: count,
                metadata: ["handle": .hex(handle), "code": "\(command.code)"])
            return
        }
        switch command.code {
        case .connectionParameterUpdateRequest:
            connectionParameterUpdateRequested(command, handle: handle)
        case .connectionParameterUpdateResponse:
            guard let response = try? command.decode(ConnectionParameterUpdateResponse.self) else {
                logMalformedSignaling(payload, handle: handle, count: countMalformedSignaling())
                return
            }
            let result: Result<Void, L2CAPError> = response.result == .accepted
                ? .success(()) : .failure(.connectionParameterUpdateRejected)
            answer(identifier: command.identifier, handle: handle, result: result)
        case .commandReject:
            guard let reject = try? command.decode(CommandReject.self) else {
                logMalformedSignaling(payload, handle: handle, count: countMalformedSignaling())
                return
            }
            answer(identifier: command.identifier, handle: handle, result: .failure(.commandRejected(reject)))
        case .disconnectionRequest:
            // We open no channel a peer could close.
            let reason: CommandReject = (try? command.decode(DisconnectionRequest.self)).map {
                .invalidCIDInRequest(localCID: $0.destinationCID, remoteCID: $0.sourceCID)
            } ?? .commandNotUnderstood
            state.withLock { reject(reason, identifier: command.identifier, handle: handle, state: &$0) }
        default:
            let unexpected: Int? = state.withLock { state in
                if SignalingCode.responsesAndIndications.contains(command.code) {
                    state.statistics.unexpectedSignalingResponses += 1
                    return state.statistics.unexpectedSignalingResponses
                }
                // Unknown codes and the credit-based requests BareBLE does not implement.
                reject(.commandNotUnderstood, identifier: command.identifier, handle: handle, state: &state)
                return nil
            }
            if let unexpected { logUnexpectedSignalingResponse(handle: handle, count: unexpected) }
        }
    }

    private func countMalformedSignaling() -> Int {
        state.withLock { state in
            state.statistics.malformedSignalingCommands += 1
            return state.statistics.malformedSignalingCommands
        }
    }

    private func logMalformedSignaling(_ payload: [UInt8], handle: UInt16, count: Int) {
        logger.droppedInput(
            "malformed signaling command dropped", counter: "malformedSignalingCommands", count: count,
            metadata: ["handle": .hex(handle), "bytes": .prefix(payload)])
    }

    private func logUnexpectedSignalingResponse(handle: UInt16, count: Int) {
        logger.droppedInput(
            "signaling response to nothing we asked dropped", counter: "unexpectedSignalingResponses", count: count,
            metadata: ["handle": .hex(handle)])
    }

    /// Central: decide with the policy, answer, and on acceptance ask the controller for the
    /// new timing. Peripheral: only the central may accept this request (4.20), so it is
    /// not understood here.
    private func connectionParameterUpdateRequested(_ command: SignalingCommand, handle: UInt16) {
        guard let connection = connection(handle) else { return }
        guard connection.role == .central else {
            state.withLock { reject(.commandNotUnderstood, identifier: command.identifier, handle: handle, state: &$0) }
            return
        }
        guard let request = try? command.decode(ConnectionParameterUpdateRequest.self) else {
            let count = state.withLock { state in
                state.statistics.malformedSignalingCommands += 1
                reject(.commandNotUnderstood, identifier: command.identifier, handle: handle, state: &state)
                return state.statistics.malformedSignalingCommands
            }
            logMalformedSignaling(command.encode(), handle: handle, count: count)
            return
        }
        // Invalid parameters are refused before the policy sees them.
        let wanted = request.isValid && configuration.connectionParameterUpdatePolicy(connection, request)
        state.withLock { state in
            guard let serial = state.connections[handle]?.serial else { return }
            // One update at a time per connection: each acceptance costs an HCI command
            // (and a task), and a peer repeating its request must not queue them faster than
            // the controller takes them.
            let busy = wanted && state.connections[handle]?.updatingConnection == true
            let accepted = wanted && !busy
            let response = SignalingCommand(
                identifier: command.identifier,
                ConnectionParameterUpdateResponse(result: accepted ? .accepted : .rejected)
            )
            // The response goes first (4.20: the central answers, then starts the update);
            // the command follows once the response is in the controller.
            let update: OutgoingPDU.Completion? = accepted ? updateConnection(handle: handle, serial: serial, to: request) : nil
            // Not queued means the link is gone or the answer met its bound (counted there):
            // either way no update follows, so none is counted as decided.
            guard enqueueLocked(BasicFrame(channelID: .leSignaling, payload: response.encode()), origin: .answer, handle: handle, completion: update, state: &state) == .queued else { return }
            if accepted {
                state.connections[handle]?.updatingConnection = true
                state.statistics.connectionParameterUpdatesAccepted += 1
            } else if busy {
                state.statistics.connectionParameterUpdatesRefusedWhileUpdating += 1
            } else {
                state.statistics.connectionParameterUpdatesRejected += 1
            }
        }
    }

    /// Issues HCI LE Connection Update once the accepting response has been sent; the
    /// connection takes another request once the controller has answered the command.
    private func updateConnection(handle: UInt16, serial: UInt64, to request: ConnectionParameterUpdateRequest) -> OutgoingPDU.Completion {
        let command = LEConnectionUpdate(connectionHandle: handle, connectionParameters: request.connectionParameters)
        return { [weak self] result in
            guard case .success = result, let self else { return }
            Task {
                let failed: Bool
                do {
                    try await self.controller.send(command)
                    failed = false
                } catch {
                    failed = true
                }
                if failed { self.logger.warning("the controller refused the connection update we accepted", metadata: ["handle": .hex(handle)]) }
                self.state.withLock { state in
                    if failed { state.statistics.connectionUpdateCommandFailures += 1 }
                    // A new connection on the same handle has its own flag.
                    if state.connections[handle]?.serial == serial { state.connections[handle]?.updatingConnection = false }
                }
            }
        }
    }

    /// The signaling MTU was exceeded: tell the peer if its command can be identified.
    func rejectOversizedSignaling(prefix: [UInt8], handle: UInt16, state: inout State) {
        guard prefix.count == 2, prefix[1] != 0,
              !SignalingCode.responsesAndIndications.contains(SignalingCode(rawValue: prefix[0]))
        else { return }
        let mtu = UInt16(clamping: configuration.signalingMTU)
        reject(.signalingMTUExceeded(actualMTU: mtu), identifier: prefix[1], handle: handle, state: &state)
    }

    func reject(_ reason: CommandReject, identifier: UInt8, handle: UInt16, state: inout State) {
        let command = SignalingCommand(identifier: identifier, reason)
        if enqueueLocked(BasicFrame(channelID: .leSignaling, payload: command.encode()), origin: .answer, handle: handle, completion: nil, state: &state) == .queued {
            state.statistics.commandRejectsSent += 1
        }
    }

    /// The peer answered one of our pending requests.
    private func answer(identifier: UInt8, handle: UInt16, result: Result<Void, L2CAPError>) {
        var unexpected: Int?
        let resumption: PendingAnswers<UInt16, Void, L2CAPError>.Resumption? = state.withLock { state in
            guard let id = state.connections[handle]?.pendingRequests.removeValue(forKey: identifier) else {
                state.statistics.unexpectedSignalingResponses += 1
                unexpected = state.statistics.unexpectedSignalingResponses
                return nil
            }
            return state.signalingAnswers.fulfill(id: id, with: WaitOutcome(result))
        }
        resumption?.resume()
        if let unexpected { logUnexpectedSignalingResponse(handle: handle, count: unexpected) }
    }

    /// Peripheral: asks the central for new connection timing (L2CAP_CONNECTION_PARAMETER_
    /// UPDATE_REQ) and waits for its answer. Throws ``L2CAPError/connectionParameterUpdateRejected``,
    /// ``L2CAPError/commandRejected(_:)``, ``L2CAPError/signalingTimeout(milliseconds:)``
    /// (after `timeout`, by default the configured signaling timeout) or
    /// ``L2CAPError/disconnected(reason:)``. Acceptance means the central will start the
    /// update; LE Connection Update Complete reports the new timing.
    public func requestConnectionParameterUpdate(
        _ request: ConnectionParameterUpdateRequest,
        connection handle: UInt16,
        timeout: Duration? = nil
    ) async throws(L2CAPError) {
        guard request.isValid else { throw .invalidConnectionParameters(request) }
        let timeout = timeout ?? configuration.signalingTimeout
        let components = timeout.components
        let milliseconds = Int(components.seconds) * 1000 + Int(components.attoseconds / 1_000_000_000_000_000)
        let deadline = ContinuousClock.now + timeout
        let registered: Result<UInt64, L2CAPError> = state.withLock { state in
            guard let connection = state.connections[handle] else { return .failure(.unknownConnection(handle: handle)) }
            guard connection.info.role == .peripheral else { return .failure(.wrongRole(required: .peripheral)) }
            guard controller.info != nil else { return .failure(.controllerNotReady) }
            guard let identifier = state.connections[handle]?.allocateIdentifier() else { return .failure(.tooManyPendingRequests) }
            let id = state.signalingAnswers.expect(handle)
            state.connections[handle]?.pendingRequests[identifier] = id
            let command = SignalingCommand(identifier: identifier, request)
            let sent: OutgoingPDU.Completion = { [weak self] result in
                if case let .failure(error) = result { self?.endRequest(id, with: .failed(error)) }
            }
            if case let .refused(failure) = enqueueLocked(BasicFrame(channelID: .leSignaling, payload: command.encode()), origin: .host, handle: handle, completion: sent, state: &state) {
                state.connections[handle]?.pendingRequests[identifier] = nil
                state.signalingAnswers.forget(id)
                return .failure(failure)
            }
            return .success(id)
        }
        switch await wait(for: try registered.get(), until: deadline) {
        case .value: return
        case let .failed(error): throw error
        case .expired: throw .signalingTimeout(milliseconds: milliseconds)
        case .cancelled: throw .signalingRequestCancelled
        }
    }

    /// Ends request `id` without the peer's answer (its deadline passed, its caller gave up,
    /// its send failed) and frees its identifier; a late answer is counted as unexpected.
    func endRequest(_ id: UInt64, with outcome: WaitOutcome<Void, L2CAPError>) {
        let resumption: PendingAnswers<UInt16, Void, L2CAPError>.Resumption? = state.withLock { state in
            for (handle, connection) in state.connections {
                if let identifier = connection.pendingRequests.first(where: { $0.value == id })?.key {
                    state.connections[handle]?.pendingRequests[identifier] = nil
                    break
                }
            }
            return state.signalingAnswers.fulfill(id: id, with: outcome)
        }
        resumption?.resume()
    }
}

extension ChannelManager: PendingAnswersOwner {
    package func withPendingAnswers<Result>(_ body: (inout PendingAnswers<UInt16, Void, L2CAPError>) -> Result) -> Result {
        state.withLock { body(&$0.signalingAnswers) }
    }

    package func deadlinePassed(_ id: UInt64) { endRequest(id, with: .expired) }
    package func waitCancelled(_ id: UInt64) { endRequest(id, with: .cancelled) }
}
