import BluetoothCore

// How a Connection follows the controller's events about it. The Connector routes events
// here by handle on the transport's reader thread; continuations are resumed after the
// lock is released.

extension Connection {
    typealias Resumption = PendingAnswers<Procedure, LinkEvent, ConnectionError>.Resumption

    func connectionUpdateCompleted(_ event: LEConnectionUpdateComplete) {
        let outcome: WaitOutcome<LinkEvent, ConnectionError>
        if event.status == .success {
            let timing = ConnectionTiming(
                connectionInterval: event.connectionInterval, peripheralLatency: event.peripheralLatency,
                supervisionTimeout: event.supervisionTimeout)
            outcome = .value(.timing(timing))
            state.withLock { $0.timing = timing }
        } else {
            outcome = .failed(.controller(.commandFailed(LEConnectionUpdate.opcode, event.status)))
        }
        deliver(.connectionUpdate, outcome)
    }

    func remoteFeaturesRead(_ event: LEReadRemoteFeaturesComplete) {
        guard event.status == .success else {
            deliver(.remoteFeatures, .failed(.controller(.commandFailed(LEReadRemoteFeatures.opcode, event.status))))
            return
        }
        let features = LEFeatures(rawValue: event.leFeatures)
        state.withLock { $0.remoteFeatures = features }
        deliver(.remoteFeatures, .value(.features(features)))
    }

    func dataLengthChanged(_ event: LEDataLengthChange) {
        let length = DataLength(
            maxTxOctets: event.maxTxOctets, maxTxTime: event.maxTxTime,
            maxRxOctets: event.maxRxOctets, maxRxTime: event.maxRxTime)
        state.withLock { $0.dataLength = length }
        deliver(.dataLength, .value(.dataLength(length)))
    }

    func phyUpdated(_ event: LEPHYUpdateComplete) {
        guard event.status == .success else {
            deliver(.phyUpdate, .failed(.controller(.commandFailed(LESetPHY.opcode, event.status))))
            return
        }
        let phy = ConnectionPHY(tx: event.txPHY, rx: event.rxPHY)
        state.withLock { $0.phy = phy }
        deliver(.phyUpdate, .value(.phy(phy)))
    }

    /// LE Read PHY's answer after connecting on more than one initiating PHY.
    func phyRead(_ phy: ConnectionPHY) {
        state.withLock { $0.phy = phy }
    }

    /// A Disconnection Complete with an error status: our Disconnect failed and the link
    /// is still up.
    func disconnectFailed(_ status: HCIErrorCode) {
        deliver(.disconnection, .failed(.controller(.commandFailed(Disconnect.opcode, status))))
    }

    /// The connection is gone: a Disconnection Complete (`reason`), or the controller was
    /// reset or lost (`failure`). Every waiting operation ends now.
    func ended(reason: HCIErrorCode?, failure: ConnectionError? = nil) {
        let ending = failure ?? .disconnected(reason: reason ?? .unspecifiedError)
        let resumptions: [Resumption] = state.withLock { state in
            guard state.ending == nil else { return [] }
            state.ending = ending
            var resumptions: [Resumption] = []
            if let reason { resumptions += state.expectations.fulfill(.disconnection, with: .value(.disconnected(reason))) }
            resumptions += state.expectations.fulfillAll(with: .failed(ending))
            return resumptions
        }
        for resumption in resumptions { resumption.resume() }
    }

    private func deliver(_ procedure: Procedure, _ outcome: WaitOutcome<LinkEvent, ConnectionError>) {
        let resumptions = state.withLock { $0.expectations.fulfill(procedure, with: outcome) }
        for resumption in resumptions { resumption.resume() }
    }
}
