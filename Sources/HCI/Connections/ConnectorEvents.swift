import BluetoothCore

// The Connector's side of the controller's events, on the transport's reader thread: new
// connections are created here, synchronously, so that an event right behind the
// completion (a Disconnection Complete, a Data Length Change) already finds its connection.

extension Connector {
    /// LE Connection Complete and LE Enhanced Connection Complete v1/v2, reduced to what a
    /// connection needs.
    struct Completion: Sendable {
        var status: HCIErrorCode
        var handle: UInt16
        var role: ConnectionRole
        var peer: DeviceAddress
        var timing: ConnectionTiming

        init(_ event: LEConnectionComplete) {
            status = event.status
            handle = event.connectionHandle
            role = event.role
            peer = DeviceAddress(event.peerAddress, type: event.peerAddressType.addressType ?? .random)
            timing = ConnectionTiming(connectionInterval: event.connectionInterval, peripheralLatency: event.peripheralLatency, supervisionTimeout: event.supervisionTimeout)
        }

        init(_ event: LEEnhancedConnectionComplete) {
            status = event.status
            handle = event.connectionHandle
            role = event.role
            peer = DeviceAddress(event.peerAddress, type: event.peerAddressType.addressType ?? .random)
            timing = ConnectionTiming(connectionInterval: event.connectionInterval, peripheralLatency: event.peripheralLatency, supervisionTimeout: event.supervisionTimeout)
        }
    }

    func handle(_ event: HCIEvent) {
        switch event {
        case let .le(.connectionComplete(complete)):
            completed(Completion(complete))
        case let .le(.enhancedConnectionComplete(complete)):
            completed(Completion(complete))
        case let .disconnectionComplete(disconnection):
            if disconnection.status == .success {
                let connection = state.withLock { $0.connections.removeValue(forKey: disconnection.connectionHandle) }
                if let connection {
                    controller.logger.info("disconnected", metadata: [
                        "peer": "\(connection.peer)", "handle": .hex(connection.handle), "reason": "\(disconnection.reason)",
                    ])
                }
                connection?.ended(reason: disconnection.reason)
            } else {
                connection(handle: disconnection.connectionHandle)?.disconnectFailed(disconnection.status)
            }
        case let .le(.connectionUpdateComplete(update)):
            connection(handle: update.connectionHandle)?.connectionUpdateCompleted(update)
        case let .le(.readRemoteFeaturesComplete(features)):
            connection(handle: features.connectionHandle)?.remoteFeaturesRead(features)
        case let .le(.dataLengthChange(change)):
            connection(handle: change.connectionHandle)?.dataLengthChanged(change)
        case let .le(.phyUpdateComplete(update)):
            connection(handle: update.connectionHandle)?.phyUpdated(update)
        case let .encryptionChange(change):
            connection(handle: change.connectionHandle)?.encryptionChanged(change)
        case let .encryptionKeyRefreshComplete(refresh):
            connection(handle: refresh.connectionHandle)?.encryptionKeyRefreshed(refresh)
        case let .le(.longTermKeyRequest(request)):
            if let connection = connection(handle: request.connectionHandle) {
                connection.longTermKeyRequested(request)
            } else {
                // No such link (a race with its end): never leave the controller waiting.
                let controller = self.controller
                Task { _ = try? await controller.send(LELongTermKeyRequestNegativeReply(connectionHandle: request.connectionHandle)) }
            }
        case let .hardwareError(error):
            // The driver resets the controller: links and the attempt are gone without
            // their events.
            controllerLost(.controller(.hardwareError(code: error.hardwareCode)), reason: .hardwareFailure)
        default:
            break
        }
    }

    private func completed(_ completion: Completion) {
        var connection: Connection?
        if completion.status == .success {
            connection = Connection(
                controller: controller, events: self, handle: completion.handle, role: completion.role,
                peer: completion.peer, timing: completion.timing)
        }
        enum Route { case attempt, incoming, stray, abandoned }
        let (route, resumptions, stale, streams, acceptor): (Route, [PendingAnswers<Wait, Event, ConnectionError>.Resumption], Connection?, [AsyncStream<Connection>.Continuation], (@Sendable (Connection) -> Void)?) = state.withLock { state in
            var stale: Connection?
            if let connection {
                // A second completion for a live handle means its end was missed.
                stale = state.connections.updateValue(connection, forKey: connection.handle)
            }
            if completion.role == .peripheral {
                return (.incoming, [], stale, Array(state.incoming.values), state.acceptor?.accept)
            }
            if state.attempt != nil, state.attempt?.outcome == nil {
                let outcome: WaitOutcome<Event, ConnectionError> = .value(connection.map { .connected($0) } ?? .refused(completion.status))
                state.attempt?.outcome = outcome
                return (.attempt, state.expectations.fulfill(.completion, with: outcome), stale, [], nil)
            }
            if state.abandonedAttempt {
                state.abandonedAttempt = false
                return (.abandoned, [], stale, [], nil)
            }
            return (.stray, [], stale, [], nil)
        }
        if let stale {
            controller.logger.warning("connection completed on a live handle: its end was missed", metadata: ["peer": "\(stale.peer)", "handle": .hex(stale.handle)])
        }
        stale?.ended(reason: .unspecifiedError)
        for resumption in resumptions { resumption.resume() }
        if let connection, route != .abandoned {
            controller.logger.info("connected", metadata: [
                "peer": "\(connection.peer)", "handle": .hex(connection.handle), "role": "\(connection.role)",
            ])
        } else if connection == nil, route == .incoming {
            controller.logger.info("incoming connection failed", metadata: ["peer": "\(completion.peer)", "status": "\(completion.status)"])
        }
        guard let connection else { return }
        switch route {
        case .incoming:
            acceptor?(connection)
            var dropped = 0
            for stream in streams {
                if case .dropped = stream.yield(connection) { dropped += 1 }
            }
            guard dropped > 0 else { return }
            let count = state.withLock { state in
                state.droppedIncomingConnections += dropped
                return state.droppedIncomingConnections
            }
            controller.logger.droppedForOverflow(
                "incoming connection not taken: its stream was full", counter: "droppedIncomingConnections", count: count,
                metadata: ["peer": "\(connection.peer)", "handle": .hex(connection.handle)])
            // No reader will ever see it: a link left up would hold a controller slot and
            // the peer with nobody serving it, so it ends at once.
            if dropped == streams.count, acceptor == nil {
                Task { try? await connection.disconnect(reason: .remoteDeviceTerminatedConnectionDueToLowResources) }
            }
        case .abandoned:
            // The attempt whose cancel was never confirmed came up after all; nobody wants it.
            controller.logger.info("late connection of an abandoned attempt: disconnecting it", metadata: ["peer": "\(connection.peer)"])
            Task { try? await connection.disconnect() }
        case .attempt, .stray:
            break
        }
    }

    /// The controller was reset or went away: every connection and the attempt end.
    func controllerLost(_ failure: ConnectionError, reason: HCIErrorCode?) {
        let (connections, resumptions) = state.withLock { state in
            let connections = Array(state.connections.values)
            state.connections = [:]
            state.abandonedAttempt = false
            var resumptions: [PendingAnswers<Wait, Event, ConnectionError>.Resumption] = []
            if state.attempt != nil, state.attempt?.outcome == nil {
                state.attempt?.outcome = .failed(failure)
                resumptions = state.expectations.fulfill(.completion, with: .failed(failure))
            }
            return (connections, resumptions)
        }
        for connection in connections { connection.ended(reason: reason, failure: reason == nil ? failure : nil) }
        for resumption in resumptions { resumption.resume() }
    }
}
