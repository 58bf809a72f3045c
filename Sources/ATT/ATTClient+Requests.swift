import BluetoothCore

// One typed helper per request PDU, and the two commands. The GATT procedures (discovery,
// long reads and writes, reliable writes) are built from these one layer up.
extension ATTClient {
    /// Exchange MTU (Core 5.4 Vol 3 Part F 3.4.2): offers `clientRxMTU` (capped at the
    /// bearer's ``ATTBearer/maximumMTU``), records and returns the agreed ATT_MTU,
    /// min(client, server) but never below 23.
    ///
    /// Sent at most once per bearer, as the specification requires. On a bearer whose MTU
    /// the layer below decides, nothing is sent and the bearer's MTU is returned.
    public func exchangeMTU(clientRxMTU: UInt16 = ATTConstants.defaultClientMTU) async throws(ATTError) -> UInt16 {
        guard clientRxMTU >= ATTConstants.minimumLEMTU else {
            throw .invalidRequest("Client Rx MTU \(clientRxMTU) is below the minimum of \(ATTConstants.minimumLEMTU)")
        }
        if bearer.mtuIsNegotiatedBelow { return bearer.mtu }
        let alreadySent = state.withLock { state in
            defer { state.mtuExchangeStarted = true }
            return state.mtuExchangeStarted
        }
        guard !alreadySent else {
            throw .invalidRequest("Exchange MTU may be sent only once per bearer; the current ATT_MTU is \(bearer.mtu)")
        }
        // Never offer more than the layer below can carry (a kernel socket's limit).
        let offered = max(ATTConstants.minimumLEMTU, min(clientRxMTU, bearer.maximumMTU ?? clientRxMTU))
        // Until the answer: the receive path records the agreed MTU from it (also for a
        // caller that gave up meanwhile) and ends the offer.
        state.withLock { $0.mtuOffered = offered }
        do {
            let response = try await transaction(
                .exchangeMTURequest(.init(clientRxMTU: offered)), expecting: ExchangeMTUResponse.self)
            return Self.agreedMTU(offered: offered, server: response.serverRxMTU)
        } catch {
            // Withdrawn before it went out (or the bearer is gone): nothing was agreed, and
            // it may be sent later. One on the wire is still answered (the offer stands).
            state.withLock { state in
                guard state.mtuOffered != nil, state.inFlight?.request != .exchangeMTURequest else { return }
                state.mtuOffered = nil
                state.mtuExchangeStarted = false
            }
            throw error
        }
    }

    /// The ATT_MTU both use after an exchange: the smaller Rx MTU, but never below 23 (a
    /// server announcing less is broken; 23 still holds, Vol 3 Part G 5.2.1).
    static func agreedMTU(offered: UInt16, server: UInt16) -> UInt16 {
        max(ATTConstants.minimumLEMTU, min(offered, server))
    }

    /// Find Information over `range`.
    public func findInformation(_ range: ClosedRange<UInt16>) async throws(ATTError) -> FindInformationResponse {
        try await transaction(
            .findInformationRequest(.init(startingHandle: range.lowerBound, endingHandle: range.upperBound)),
            expecting: FindInformationResponse.self)
    }

    /// Find By Type Value over `range`: attributes of 16-bit type `type` whose value is `value`.
    public func findByTypeValue(
        _ range: ClosedRange<UInt16>, type: UInt16, value: [UInt8]
    ) async throws(ATTError) -> FindByTypeValueResponse {
        try await transaction(
            .findByTypeValueRequest(.init(
                startingHandle: range.lowerBound, endingHandle: range.upperBound, attributeType: type, attributeValue: value)),
            expecting: FindByTypeValueResponse.self)
    }

    /// Read By Type over `range`.
    public func readByType(_ range: ClosedRange<UInt16>, type: BluetoothUUID) async throws(ATTError) -> ReadByTypeResponse {
        try await transaction(
            .readByTypeRequest(.init(startingHandle: range.lowerBound, endingHandle: range.upperBound, attributeType: type)),
            expecting: ReadByTypeResponse.self)
    }

    /// Read By Group Type over `range`.
    public func readByGroupType(
        _ range: ClosedRange<UInt16>, type: BluetoothUUID
    ) async throws(ATTError) -> ReadByGroupTypeResponse {
        try await transaction(
            .readByGroupTypeRequest(.init(
                startingHandle: range.lowerBound, endingHandle: range.upperBound, attributeGroupType: type)),
            expecting: ReadByGroupTypeResponse.self)
    }

    /// Read: the value, or its first ATT_MTU - 1 bytes.
    public func read(_ handle: UInt16) async throws(ATTError) -> ReadResponse {
        try await transaction(.readRequest(.init(attributeHandle: handle)), expecting: ReadResponse.self)
    }

    /// Read Blob: part of a value from `offset`.
    public func readBlob(_ handle: UInt16, offset: UInt16) async throws(ATTError) -> ReadBlobResponse {
        try await transaction(
            .readBlobRequest(.init(attributeHandle: handle, valueOffset: offset)), expecting: ReadBlobResponse.self)
    }

    /// Read Multiple: the values of `handles`, concatenated.
    public func readMultiple(_ handles: [UInt16]) async throws(ATTError) -> ReadMultipleResponse {
        let request: ReadMultipleRequest
        do { request = try ReadMultipleRequest(setOfHandles: handles) } catch {
            throw .invalidRequest("Read Multiple needs at least one handle")
        }
        return try await transaction(.readMultipleRequest(request), expecting: ReadMultipleResponse.self)
    }

    /// Read Multiple Variable: the values of `handles`, each with its length.
    public func readMultipleVariable(_ handles: [UInt16]) async throws(ATTError) -> ReadMultipleVariableResponse {
        let request: ReadMultipleVariableRequest
        do { request = try ReadMultipleVariableRequest(setOfHandles: handles) } catch {
            throw .invalidRequest("Read Multiple Variable needs at least one handle")
        }
        return try await transaction(.readMultipleVariableRequest(request), expecting: ReadMultipleVariableResponse.self)
    }

    /// Write Request: returns when the server has written the value.
    public func write(_ handle: UInt16, value: [UInt8]) async throws(ATTError) {
        _ = try await transaction(
            .writeRequest(.init(attributeHandle: handle, attributeValue: value)), expecting: WriteResponse.self)
    }

    /// Prepare Write: queues part of a value; returns the server's echo, which a reliable
    /// write compares with what it sent.
    public func prepareWrite(
        _ handle: UInt16, offset: UInt16, value: [UInt8]
    ) async throws(ATTError) -> PrepareWriteResponse {
        try await transaction(
            .prepareWriteRequest(.init(attributeHandle: handle, valueOffset: offset, partAttributeValue: value)),
            expecting: PrepareWriteResponse.self)
    }

    /// Execute Write: writes (or with `.cancelAllPreparedWrites`, discards) everything prepared.
    public func executeWrite(_ flags: ExecuteWriteRequest.Flags) async throws(ATTError) {
        _ = try await transaction(.executeWriteRequest(.init(flags: flags)), expecting: ExecuteWriteResponse.self)
    }

    // MARK: Commands

    /// Write Command: sent at once, without waiting; no response, not even an error, ever
    /// comes back.
    public func writeCommand(_ handle: UInt16, value: [UInt8]) throws(ATTError) {
        try sendCommand(.writeCommand(.init(attributeHandle: handle, attributeValue: value)))
    }

    /// Signed Write Command with a signature SMP computed over ``SignedWriteCommand/signedBytes``.
    public func signedWriteCommand(_ command: SignedWriteCommand) throws(ATTError) {
        try sendCommand(.signedWriteCommand(command))
    }

    /// Sends a PDU that expects no response (a command), at once.
    public func sendCommand(_ pdu: ATTPDU) throws(ATTError) {
        guard pdu.opcode.isCommand else {
            throw .invalidRequest("\(pdu.opcode) is not a command; send requests with send(request:)")
        }
        if let reason = closedReason { throw .bearerClosed(reason) }
        let bytes = pdu.encode()
        let mtu = bearer.mtu
        guard bytes.count <= Int(mtu) else { throw .pduExceedsMTU(pdu.opcode, length: bytes.count, mtu: mtu) }
        do {
            try bearer.send(bytes)
        } catch {
            tearDown(error, closeBearer: false)
            throw .bearerClosed(closedReason ?? error)
        }
    }
}
