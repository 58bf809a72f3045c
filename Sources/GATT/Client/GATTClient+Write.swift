import ATT
import BluetoothCore

// Characteristic value writes (Core 5.4 Vol 3 Part G 4.9).
extension GATTClient {
    /// Write Characteristic Value (4.9.3); a value longer than ATT_MTU - 3 is written as
    /// Write Long Characteristic Values (4.9.4) instead.
    public func writeValue(_ handle: UInt16, value: [UInt8]) async throws(GATTError) {
        if value.count <= Int(att.mtu) - 3 {
            try await request { () async throws(ATTError) in try await att.write(handle, value: value) }
        } else {
            try await writeLongValue(handle, value: value)
        }
    }

    /// Write Without Response (4.9.1): sent at once; nothing, not even an error, comes back.
    public func writeWithoutResponse(_ handle: UInt16, value: [UInt8]) throws(GATTError) {
        do { try att.writeCommand(handle, value: value) } catch { throw .att(error) }
    }

    /// Write Long Characteristic Values (4.9.4): Prepare Write of ATT_MTU - 5 bytes at a
    /// time from `offset`, each echo compared with what was sent, then Execute Write.
    public func writeLongValue(_ handle: UInt16, value: [UInt8], offset: UInt16 = 0) async throws(GATTError) {
        try await executePreparedWrites([GATTWrite(handle: handle, value: value)], startingAt: offset)
    }

    /// Reliable Writes (4.9.5): every value prepared (split as needed), each echo
    /// compared, then all written together by one Execute Write, or none of them.
    public func reliableWrite(_ writes: [GATTWrite]) async throws(GATTError) {
        guard !writes.isEmpty else { return }
        try await executePreparedWrites(writes, startingAt: 0)
    }

    /// One at a time: the server has one prepare queue per client.
    private func executePreparedWrites(_ writes: [GATTWrite], startingAt firstOffset: UInt16) async throws(GATTError) {
        try await procedure(writes.count == 1 ? "Write Long Characteristic Values" : "Reliable Writes") { () async throws(GATTError) in
            try await request { () async throws(ATTError) in try await takeTurn(.preparedWrites) }
            defer { endTurn(.preparedWrites) }
            try await prepareAndExecute(writes, startingAt: firstOffset)
        }
    }

    private func prepareAndExecute(_ writes: [GATTWrite], startingAt firstOffset: UInt16) async throws(GATTError) {
        let chunk = Int(att.mtu) - 5
        for write in writes {
            guard Int(firstOffset) + write.value.count <= ATTConstants.maximumAttributeValueLength else {
                throw .invalidRequest("a value of \(Int(firstOffset) + write.value.count) bytes exceeds the 512-byte maximum")
            }
            var position = 0
            repeat {
                let part = Array(write.value[position..<min(position + chunk, write.value.count)])
                let offset = firstOffset + UInt16(position)
                let echo: PrepareWriteResponse
                do {
                    echo = try await att.prepareWrite(write.handle, offset: offset, value: part)
                } catch {
                    // The server may hold earlier parts, and this one when the caller was
                    // cancelled while it was out: empty its queue before failing (the next
                    // long write's Execute Write would commit them with its own).
                    await cancelPreparedWrites()
                    throw .att(error)
                }
                guard echo.attributeHandle == write.handle, echo.valueOffset == offset, echo.partAttributeValue == part else {
                    await cancelPreparedWrites()
                    throw .preparedWriteEchoMismatch(handle: write.handle, offset: offset)
                }
                position += part.count
            } while position < write.value.count
        }
        try await request { () async throws(ATTError) in try await att.executeWrite(.immediatelyWriteAllPendingPreparedValues) }
    }

    /// Execute Write with flags 0x00: the server drops what was prepared. Outside the
    /// procedure's deadline, which may be what ended it (the request still has its own 30 s),
    /// and outside the caller's task, which may have been cancelled; the turn is held until
    /// it is answered. On a closed bearer it fails at once, sending nothing.
    private func cancelPreparedWrites() async {
        let att = self.att
        await Task {
            _ = await ATTProcedureDeadline.$current.withValue(nil) {
                try? await att.executeWrite(.cancelAllPreparedWrites)
            }
        }.value
    }
}
