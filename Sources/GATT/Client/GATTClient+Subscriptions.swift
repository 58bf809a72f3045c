import ATT
import BluetoothCore

// Characteristic Value Notifications and Indications (Core 5.4 Vol 3 Part G 4.10, 4.11)
// through the Client Characteristic Configuration descriptor (3.3.3.3).
extension GATTClient {
    /// Subscribes to `characteristic`'s value: writes its CCCD with `configuration`
    /// (notifications when the characteristic notifies, else indications) unless another
    /// consumer already asked for those bits, and returns the values as they arrive.
    ///
    /// The stream ends when the bearer closes. When its consumer stops, and it was the
    /// last one for this value, the CCCD is written back to 0.
    public func subscribe(
        to characteristic: GATTDatabase.Characteristic,
        configuration requested: ClientCharacteristicConfiguration? = nil
    ) async throws(GATTError) -> AsyncStream<[UInt8]> {
        guard let cccd = characteristic.clientCharacteristicConfigurationHandle else {
            throw .invalidRequest("characteristic \(characteristic.uuid) at 0x\(hex16(characteristic.valueHandle)) has no Client Characteristic Configuration descriptor")
        }
        let configuration = requested ?? (characteristic.properties.contains(.notify) ? .notification : .indication)
        let valueHandle = characteristic.valueHandle
        // Listening starts before the CCCD is written, so the first value is not lost. One
        // bounded stream straight from the bearer's thread: a peer decides how fast values
        // come, so a consumer that falls behind loses the oldest, never memory without bound.
        let (stream, continuation) = AsyncStream.makeStream(
            of: [UInt8].self, bufferingPolicy: .bufferingNewest(ATTClient.defaultStreamBuffer))
        let listening = att.addValueHandler(handle: valueHandle, onClose: { continuation.finish() }) {
            continuation.yield($0.value)
        }
        let current = subscriptions[valueHandle] ?? (0, [])
        let wanted = current.configuration.union(configuration)
        subscriptions[valueHandle] = (current.consumers + 1, wanted)
        if wanted != current.configuration {
            do {
                try await att.write(cccd, value: wanted.bytes)
            } catch {
                listening.cancel()
                await release(valueHandle, cccd: cccd)
                throw .att(error)
            }
        }
        continuation.onTermination = { [weak self] _ in
            listening.cancel()
            Task { await self?.release(valueHandle, cccd: cccd) }
        }
        return stream
    }

    /// How many consumers are subscribed to `valueHandle`.
    public func subscriberCount(valueHandle: UInt16) -> Int {
        subscriptions[valueHandle]?.consumers ?? 0
    }

    /// One consumer left; the last one turns the CCCD off.
    func release(_ valueHandle: UInt16, cccd: UInt16) async {
        guard let current = subscriptions[valueHandle] else { return }
        if current.consumers > 1 {
            subscriptions[valueHandle] = (current.consumers - 1, current.configuration)
            return
        }
        subscriptions[valueHandle] = nil
        guard att.closedReason == nil else { return }
        // Nothing waits on this: a failure means the link is going, which ends the
        // server's configuration for an unbonded client anyway.
        try? await att.write(cccd, value: ClientCharacteristicConfiguration().bytes)
    }
}
