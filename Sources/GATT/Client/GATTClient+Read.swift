import ATT
import BluetoothCore

// Characteristic value reads (Core 5.4 Vol 3 Part G 4.8).
extension GATTClient {
    /// Read Characteristic Value (4.8.1), completed transparently as Read Long
    /// Characteristic Values (4.8.3) when the first response fills the PDU: Read Blob
    /// follows at each offset while responses are full (ATT_MTU - 1 bytes).
    public func readValue(_ handle: UInt16) async throws(GATTError) -> [UInt8] {
        let first = try await request { () async throws(ATTError) in try await att.read(handle) }.attributeValue
        return try await continueLongRead(handle, have: first)
    }

    /// Read Long Characteristic Values (4.8.3) from `offset` with Read Blob only.
    public func readLongValue(_ handle: UInt16, offset: UInt16 = 0) async throws(GATTError) -> [UInt8] {
        guard offset <= ATTConstants.maximumAttributeValueLength else {
            throw .invalidRequest("offset \(offset) lies past the 512 bytes an attribute value may have")
        }
        let first = try await readBlob(handle, offset: offset) ?? []
        return try await continueLongRead(handle, have: first, from: offset)
    }

    /// Read Using Characteristic UUID (4.8.2): Read By Type over `range`; the values of
    /// the first response (a server returns values of one length per response).
    public func readUsingCharacteristicUUID(
        _ uuid: BluetoothUUID, in range: ClosedRange<UInt16> = 0x0001...0xFFFF
    ) async throws(GATTError) -> [GATTAttributeValue] {
        let response = try await request { () async throws(ATTError) in try await att.readByType(range, type: uuid) }
        return response.attributeDataList.map { GATTAttributeValue(handle: $0.attributeHandle, value: $0.attributeValue) }
    }

    /// Read Multiple Characteristic Values (4.8.4): the values concatenated, as the server
    /// sends them (only meaningful when every value but the last has a known length).
    public func readMultiple(_ handles: [UInt16]) async throws(GATTError) -> [UInt8] {
        try await request { () async throws(ATTError) in try await att.readMultiple(handles) }.setOfValues
    }

    /// Read Multiple Variable Length Characteristic Values (4.8.5), one value per handle.
    /// A value the response truncated is completed with Read Blob. A server without the
    /// request (Request Not Supported) is remembered, and each value is read on its own.
    public func readMultipleVariable(_ handles: [UInt16]) async throws(GATTError) -> [[UInt8]] {
        try await procedure("Read Multiple Variable Length Characteristic Values") { () async throws(GATTError) in
            try await readEachVariable(handles)
        }
    }

    private func readEachVariable(_ handles: [UInt16]) async throws(GATTError) -> [[UInt8]] {
        if !readMultipleVariableUnsupported {
            do {
                let mtu = Int(att.mtu)
                let tuples = try await att.readMultipleVariable(handles).lengthValueTupleList
                // A list longer than ATT_MTU - 1 octets is cut there (Vol 3 Part F
                // 3.4.4.12): fewer values than handles only in a full response, full
                // meaning no room for another tuple's length and a byte of its value
                // (where ours stops).
                let full = tuples.reduce(0) { $0 + 2 + $1.attributeValue.count } > mtu - 4
                guard tuples.count == handles.count || tuples.count < handles.count && full else {
                    throw GATTError.invalidResponse("Read Multiple Variable answered \(tuples.count) values for \(handles.count) handles")
                }
                var values: [[UInt8]] = []
                for (index, handle) in handles.enumerated() {
                    guard index < tuples.count else {
                        values.append(try await readValue(handle))
                        continue
                    }
                    let entry = tuples[index]
                    values.append(entry.isTruncated
                        ? try await continueLongRead(handle, have: entry.attributeValue, force: true)
                        : try withinMaximum(entry.attributeValue, at: handle, from: 0))
                }
                return values
            } catch let error as GATTError {
                throw error
            } catch let error as ATTError {
                guard error.errorCode == .requestNotSupported else { throw .att(error) }
                readMultipleVariableUnsupported = true
            } catch {
                throw .invalidResponse("\(error)")
            }
        }
        var values: [[UInt8]] = []
        for handle in handles { values.append(try await readValue(handle)) }
        return values
    }

    // MARK: Long reads

    /// Reads on with Read Blob after `have` (read from `from`) while the last response was
    /// full, up to the 512-byte maximum of an attribute value (Vol 3 Part F 3.2.9).
    /// `force` continues even after a short piece (a truncated Read Multiple Variable value).
    ///
    /// A value that grows past 512 bytes is the server's error, not a longer value: it fails
    /// typed rather than being cut, so a broken server is seen as broken and no caller
    /// takes 512 bytes of it for the whole value.
    func continueLongRead(_ handle: UInt16, have: [UInt8], from: UInt16 = 0, force: Bool = false) async throws(GATTError) -> [UInt8] {
        try await procedure("Read Long Characteristic Values at 0x\(hex16(handle))") { () async throws(GATTError) in
            try await readOn(handle, have: have, from: from, force: force)
        }
    }

    private func readOn(_ handle: UInt16, have: [UInt8], from: UInt16, force: Bool) async throws(GATTError) -> [UInt8] {
        let full = Int(att.mtu) - 1
        var value = try withinMaximum(have, at: handle, from: from)
        var last = have.count
        var mustContinue = force
        while mustContinue || last == full, Int(from) + value.count < ATTConstants.maximumAttributeValueLength {
            let offset = Int(from) + value.count
            guard let part = try await readBlob(handle, offset: UInt16(offset)) else { break }
            value = try withinMaximum(value + part, at: handle, from: from)
            last = part.count
            mustContinue = false
            if part.isEmpty { break }
        }
        return value
    }

    /// `value` (read from `from`) when it ends within 512 bytes.
    private func withinMaximum(_ value: [UInt8], at handle: UInt16, from: UInt16) throws(GATTError) -> [UInt8] {
        let end = Int(from) + value.count
        guard end <= ATTConstants.maximumAttributeValueLength else {
            throw .invalidResponse("the value at 0x\(hex16(handle)) runs to \(end) bytes, past the 512 an attribute value may have (Vol 3 Part F 3.2.9)")
        }
        return value
    }

    /// One Read Blob; nil when the server says the value ends here (Attribute Not Long,
    /// or Invalid Offset at exactly the value's end).
    private func readBlob(_ handle: UInt16, offset: UInt16) async throws(GATTError) -> [UInt8]? {
        do {
            return try await att.readBlob(handle, offset: offset).partAttributeValue
        } catch {
            if offset > 0, error.errorCode == .attributeNotLong || error.errorCode == .invalidOffset { return nil }
            throw .att(error)
        }
    }
}
