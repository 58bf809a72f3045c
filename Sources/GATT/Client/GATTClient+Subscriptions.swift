import ATT
import BluetoothCore

// Characteristic Value Notifications and Indications (Core 5.4 Vol 3 Part G 4.10, 4.11)
// through the Client Characteristic Configuration descriptor (3.3.3.3).
extension GATTClient {
    /// Subscribes to `characteristic`'s value: writes its CCCD with `configuration`
    /// (notifications when the characteristic notifies, else indications) unless the
    /// server already has those bits for another consumer, and returns the values as they
    /// arrive, once the server has acknowledged them.
    ///
    /// The stream keeps the newest ``ATTClient/defaultStreamBuffer`` values for a consumer
    /// that falls behind (a peer decides how fast values come, so memory stays bounded) and
    /// counts what it drops in ``ATTClient/Statistics/valuesDroppedByStreams``. It
    /// ends when the bearer closes. When its consumer stops, and it was the last one for
    /// this value, the CCCD is written back to 0.
    public func subscribe(
        to characteristic: GATTDatabase.Characteristic,
        configuration requested: ClientCharacteristicConfiguration? = nil
    ) async throws(GATTError) -> AsyncStream<[UInt8]> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: [UInt8].self, bufferingPolicy: .bufferingNewest(ATTClient.defaultStreamBuffer))
        let subscription = try await subscribe(
            to: characteristic, configuration: requested, onEnd: { continuation.finish() }
        ) { [weak att] value in
            if case .dropped = continuation.yield(value) { att?.countDroppedValue() }
        }
        continuation.onTermination = { _ in subscription.cancel() }
        return stream
    }

    /// Subscribes like ``subscribe(to:configuration:)`` but calls `handler` synchronously on
    /// the bearer's thread with each value, in arrival order, with no queue or task hop in
    /// between: the path for high notification rates (keep the handler short; an
    /// indication is confirmed after it returns). `onEnd` runs once when the link side ends
    /// the subscription (the bearer closed, or ``unsubscribe(from:)``). Cancelling or
    /// releasing the returned subscription stops the calls and, for the last consumer,
    /// turns the CCCD off.
    public func subscribe(
        to characteristic: GATTDatabase.Characteristic,
        configuration requested: ClientCharacteristicConfiguration? = nil,
        onEnd: (@Sendable () -> Void)? = nil,
        handler: @escaping @Sendable ([UInt8]) -> Void
    ) async throws(GATTError) -> ATTSubscription {
        guard let cccd = characteristic.clientCharacteristicConfigurationHandle else {
            throw .invalidRequest("characteristic \(characteristic.uuid) at 0x\(hex16(characteristic.valueHandle)) has no Client Characteristic Configuration descriptor")
        }
        let configuration = requested ?? (characteristic.properties.contains(.notify) ? .notification : .indication)
        let valueHandle = characteristic.valueHandle
        let ended = ATTSubscription { onEnd?() }
        // Listening starts before the CCCD is written, so the first value is not lost.
        let listening = att.addValueHandler(handle: valueHandle, onClose: { ended.cancel() }) { handler($0.value) }
        let consumer = nextConsumerID
        nextConsumerID += 1
        subscriptions[valueHandle, default: [:]][consumer] = SubscriptionConsumer(configuration: configuration)
        let generation = subscriptionGenerations[valueHandle, default: 0]
        do {
            try await configure(valueHandle, cccd: cccd)
        } catch {
            listening.cancel()
            // Before anyone waiting for the CCCD runs: they write it without these bits.
            if subscriptionGenerations[valueHandle, default: 0] == generation { removeConsumer(consumer, of: valueHandle) }
            // Cancelled: a write with these bits may have reached the server (this one's,
            // or one another consumer made while this one waited): the CCCD is written to
            // what the others want once it is this handle's turn. Not when the handle's
            // subscriptions were ended meanwhile: after Service Changed `cccd` may name
            // another attribute, and `unsubscribe` writes the CCCD itself.
            if case .cancelled = error, att.closedReason == nil, subscriptionGenerations[valueHandle, default: 0] == generation {
                Task { try? await self.configure(valueHandle, cccd: cccd) }
            }
            throw .att(error)
        }
        // Ended while the write was out (Service Changed, unsubscribe): ended too.
        guard subscriptionGenerations[valueHandle, default: 0] == generation else {
            listening.cancel()
            ended.cancel()
            return ATTSubscription {}
        }
        subscriptions[valueHandle]?[consumer]?.end = {
            listening.cancel()
            ended.cancel()
        }
        return ATTSubscription { [weak self] in
            listening.cancel()
            Task { await self?.release(valueHandle, cccd: cccd, consumer: consumer) }
        }
    }

    /// Ends every subscription of `characteristic` and writes its CCCD back to 0, returning once
    /// the server acknowledged: what a program does before it disconnects or exits, so
    /// the peer stops sending (unlike ending the streams, which turns the CCCD off in the
    /// background). Nothing is sent when nobody is subscribed.
    public func unsubscribe(from characteristic: GATTDatabase.Characteristic) async throws(GATTError) {
        let valueHandle = characteristic.valueHandle
        guard let consumers = subscriptions.removeValue(forKey: valueHandle),
              let cccd = characteristic.clientCharacteristicConfigurationHandle
        else { return }
        subscriptionGenerations[valueHandle, default: 0] += 1
        // Their releases find no subscription left, so they write nothing themselves.
        for consumer in consumers.values { consumer.end?() }
        try await request { () async throws(ATTError) in try await configure(valueHandle, cccd: cccd) }
    }

    /// Service Changed named `range`: its handles may name other attributes now, so every
    /// subscription there ends (its stream finishes; its consumer subscribes again in the
    /// new layout, which writes the CCCD afresh) and no CCCD there is written for it.
    func endSubscriptions(in range: ClosedRange<UInt16>) {
        for valueHandle in subscriptions.keys where range.contains(valueHandle) {
            subscriptionGenerations[valueHandle, default: 0] += 1
            for consumer in (subscriptions.removeValue(forKey: valueHandle) ?? [:]).values { consumer.end?() }
        }
        // What the server holds there belongs to whatever the handles name now.
        for valueHandle in writtenConfigurations.keys where range.contains(valueHandle) {
            writtenConfigurations[valueHandle] = nil
        }
        uncertainConfigurations = uncertainConfigurations.filter { !range.contains($0) }
        for case let .configuration(valueHandle) in turns.keys where range.contains(valueHandle) {
            staleConfigurationWrites.insert(valueHandle)
        }
    }

    /// How many consumers are subscribed to `valueHandle`, or subscribing.
    public func subscriberCount(valueHandle: UInt16) -> Int {
        subscriptions[valueHandle]?.count ?? 0
    }

    /// One consumer left; the CCCD is written down to what the others still want (0 after
    /// the last one). A consumer already ended (by ``unsubscribe(from:)`` or Service
    /// Changed) changes nothing: the CCCD is a newer subscription's by now.
    func release(_ valueHandle: UInt16, cccd: UInt16, consumer: UInt64) async {
        guard removeConsumer(consumer, of: valueHandle), att.closedReason == nil else { return }
        // Nothing waits on this: a failure means the link is going, which ends the
        // server's configuration for an unbonded client anyway.
        try? await configure(valueHandle, cccd: cccd)
    }

    /// Forgets `consumer`; false when it was not there.
    @discardableResult
    private func removeConsumer(_ consumer: UInt64, of valueHandle: UInt16) -> Bool {
        guard subscriptions[valueHandle]?.removeValue(forKey: consumer) != nil else { return false }
        if subscriptions[valueHandle]?.isEmpty == true { subscriptions[valueHandle] = nil }
        return true
    }

    /// Writes the CCCD of `valueHandle` to what its consumers want together, unless the
    /// server already has that, after any write of it that is out: the write a `subscribe`
    /// returns after, and the one a release or ``unsubscribe(from:)`` makes. A refused
    /// write leaves the CCCD as the server has it.
    private func configure(_ valueHandle: UInt16, cccd: UInt16) async throws(ATTError) {
        try await takeTurn(.configuration(valueHandle: valueHandle))
        defer { endTurn(.configuration(valueHandle: valueHandle)) }
        let wanted = (subscriptions[valueHandle] ?? [:]).values.reduce(into: ClientCharacteristicConfiguration()) { $0.formUnion($1.configuration) }
        guard wanted != writtenConfigurations[valueHandle, default: []] || uncertainConfigurations.contains(valueHandle) else { return }
        staleConfigurationWrites.remove(valueHandle)
        do {
            try await att.write(cccd, value: wanted.bytes)
        } catch {
            // A cancelled write may have reached the server or not: the next configuration
            // writes, whatever is recorded.
            if case .cancelled = error, !staleConfigurationWrites.contains(valueHandle) {
                uncertainConfigurations.insert(valueHandle)
            }
            throw error
        }
        guard staleConfigurationWrites.remove(valueHandle) == nil else { return }
        uncertainConfigurations.remove(valueHandle)
        writtenConfigurations[valueHandle] = wanted.isEmpty ? nil : wanted
    }
}

/// One consumer of a value: the CCCD bits it asked for, and how to end it (set once its
/// CCCD write succeeded).
struct SubscriptionConsumer {
    var configuration: ClientCharacteristicConfiguration
    var end: (@Sendable () -> Void)?
}
