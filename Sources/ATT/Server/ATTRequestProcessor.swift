import BluetoothCore

/// A request refused: the handle and code its Error Response carries.
struct ATTRequestFailure: Error, Sendable, Equatable {
    let handle: UInt16
    let code: ATTErrorCode
}

/// The request logic of one bearer's server (Core 5.4 Vol 3 Part F 3.4): a request and the
/// state it may change (the prepare queue) in, the PDU to answer with out, over the
/// attribute store. No bearer, no lock, no clock: the driver (``ATTServer``) owns those,
/// and calls this for one request at a time.
///
/// The store hands out whole values; everything ATT adds is done here: permission checks,
/// offsets, packing lists into the ATT_MTU, the 512-octet cap, the prepare queue.
struct ATTRequestProcessor: Sendable {
    let store: any ATTAttributeStore
    /// Our receive MTU, announced in Exchange MTU Responses.
    let receiveMTU: UInt16
    /// Attributes asked of the store per call while walking a range.
    static let walkPage = 64

    /// The answer to `request`: its response, or an Error Response.
    func answer(
        _ request: ATTPDU, context: ATTServerContext, mtu: Int, queue: inout ATTPrepareQueue
    ) async -> ATTPDU {
        do {
            return try await respond(to: request, context: context, mtu: mtu, queue: &queue)
        } catch {
            return .errorResponse(.init(
                requestOpcodeInError: request.opcode, attributeHandleInError: error.handle, errorCode: error.code))
        }
    }

    private func respond(
        to request: ATTPDU, context: ATTServerContext, mtu: Int, queue: inout ATTPrepareQueue
    ) async throws(ATTRequestFailure) -> ATTPDU {
        switch request {
        case .exchangeMTURequest:
            return .exchangeMTUResponse(.init(serverRxMTU: receiveMTU))
        case .findInformationRequest(let r):
            return try findInformation(r, mtu: mtu)
        case .findByTypeValueRequest(let r):
            return try await findByTypeValue(r, context: context, mtu: mtu)
        case .readByTypeRequest(let r):
            return try await readByType(r, context: context, mtu: mtu)
        case .readByGroupTypeRequest(let r):
            return try await readByGroupType(r, context: context, mtu: mtu)
        case .readRequest(let r):
            return try Self.readResponse(request, value: try await readValue(at: r.attributeHandle, context: context), mtu: mtu)
        case .readBlobRequest(let r):
            return try Self.readResponse(request, value: try await readValue(at: r.attributeHandle, context: context), mtu: mtu)
        case .readMultipleRequest(let r):
            // Every handle is read, so the request fails as a whole on any error (3.4.4.7),
            // before the concatenation is cut to ATT_MTU - 1.
            var values: [UInt8] = []
            for handle in r.setOfHandles { values += try await readValue(at: handle, context: context) }
            return .readMultipleResponse(.init(setOfValues: Array(values.prefix(mtu - 1))))
        case .readMultipleVariableRequest(let r):
            return try await readMultipleVariable(r, context: context, mtu: mtu)
        case .writeRequest(let r):
            let attribute = try await writable(r.attributeHandle, context: context, security: context.security)
            try checkLength(r.attributeValue, at: attribute.handle)
            if let code = await store.write(attribute, value: r.attributeValue, kind: .request, context: context) {
                throw ATTRequestFailure(handle: attribute.handle, code: code)
            }
            return .writeResponse(.init())
        case .prepareWriteRequest(let r):
            let attribute = try await writable(r.attributeHandle, context: context, security: context.security)
            guard queue.append(.init(attribute: attribute, offset: r.valueOffset, value: r.partAttributeValue)) else {
                throw ATTRequestFailure(handle: r.attributeHandle, code: .prepareQueueFull)
            }
            return .prepareWriteResponse(.init(
                attributeHandle: r.attributeHandle, valueOffset: r.valueOffset, partAttributeValue: r.partAttributeValue))
        case .executeWriteRequest(let r):
            try await executeWrite(r.flags, context: context, queue: &queue)
            return .executeWriteResponse(.init())
        default:
            // A request this server does not perform, or one it does not know (3.4.1.1).
            throw ATTRequestFailure(handle: 0, code: .requestNotSupported)
        }
    }

    /// The answer to a Read or Read Blob Request whose value the store holds (no
    /// authorization, no application handler), found without suspending: the server sends
    /// it from the bearer's thread, with no task in between. Nil for any other request, or
    /// when the answer has to wait; the request then goes the way of ``answer(_:context:mtu:queue:)``.
    /// The checks and their order are the same as there.
    func answerWithoutWaiting(_ request: ATTPDU, context: ATTServerContext, mtu: Int) -> ATTPDU? {
        let handle: UInt16
        switch request {
        case .readRequest(let r): handle = r.attributeHandle
        case .readBlobRequest(let r): handle = r.attributeHandle
        default: return nil
        }
        do throws(ATTRequestFailure) {
            let attribute = try attribute(at: handle)
            guard !(try checkBeforeAuthorization(attribute, .read, security: context.security)),
                let stored = store.storedValue(attribute, context: context)
            else { return nil }
            return try Self.readResponse(request, value: try Self.value(stored, of: attribute), mtu: mtu)
        } catch {
            return .errorResponse(.init(requestOpcodeInError: request.opcode, attributeHandleInError: error.handle, errorCode: error.code))
        }
    }

    /// A Read Response (the value cut to ATT_MTU - 1 octets) or a Read Blob Response (from
    /// the offset, at most ATT_MTU - 1 octets; an offset past the end is Invalid Offset).
    private static func readResponse(_ request: ATTPDU, value: [UInt8], mtu: Int) throws(ATTRequestFailure) -> ATTPDU {
        guard case .readBlobRequest(let r) = request else {
            return .readResponse(.init(attributeValue: Array(value.prefix(mtu - 1))))
        }
        let offset = Int(r.valueOffset)
        guard offset <= value.count else { throw ATTRequestFailure(handle: r.attributeHandle, code: .invalidOffset) }
        return .readBlobResponse(.init(partAttributeValue: Array(value[offset..<min(value.count, offset + mtu - 1)])))
    }

    // MARK: Shared checks

    /// A handle range as 3.4.3.1 and its siblings require: start not 0, start ≤ end.
    func checkRange(_ start: UInt16, _ end: UInt16) throws(ATTRequestFailure) -> ClosedRange<UInt16> {
        guard start != 0, start <= end else { throw ATTRequestFailure(handle: start, code: .invalidHandle) }
        return start...end
    }

    func attribute(at handle: UInt16) throws(ATTRequestFailure) -> ATTAttribute {
        guard handle != 0, let attribute = store.attribute(at: handle) else {
            throw ATTRequestFailure(handle: handle, code: .invalidHandle)
        }
        return attribute
    }

    /// The checks before an operation, in this order: permitted at all (Read/Write Not
    /// Permitted), the link's protection (``ATTPermissions/Access/denial(on:)``), then the
    /// store's authorization.
    func check(
        _ attribute: ATTAttribute, _ operation: ATTOperation, context: ATTServerContext, security: ATTLinkSecurity
    ) async throws(ATTRequestFailure) {
        if try checkBeforeAuthorization(attribute, operation, security: security),
            let code = await store.authorize(attribute, operation: operation, context: context)
        {
            throw ATTRequestFailure(handle: attribute.handle, code: code)
        }
    }

    /// The checks before authorization; true when the store's authorization is still to ask.
    private func checkBeforeAuthorization(
        _ attribute: ATTAttribute, _ operation: ATTOperation, security: ATTLinkSecurity
    ) throws(ATTRequestFailure) -> Bool {
        guard let access = attribute.permissions.access(for: operation) else {
            throw ATTRequestFailure(handle: attribute.handle, code: operation == .read ? .readNotPermitted : .writeNotPermitted)
        }
        if let code = access.denial(on: security) { throw ATTRequestFailure(handle: attribute.handle, code: code) }
        return access.requiresAuthorization
    }

    /// A permitted attribute's whole value.
    func read(_ attribute: ATTAttribute, context: ATTServerContext) async throws(ATTRequestFailure) -> [UInt8] {
        try await check(attribute, .read, context: context, security: context.security)
        return try Self.value(await store.read(attribute, context: context), of: attribute)
    }

    /// What the store read, as a value or the error to answer with; a store that returns
    /// more than 512 octets is cut there, since no attribute value may be longer (3.2.9).
    private static func value(_ read: Result<[UInt8], ATTErrorCode>, of attribute: ATTAttribute) throws(ATTRequestFailure) -> [UInt8] {
        switch read {
        case .success(let value):
            return value.count > ATTConstants.maximumAttributeValueLength ? Array(value.prefix(ATTConstants.maximumAttributeValueLength)) : value
        case .failure(let code):
            throw ATTRequestFailure(handle: attribute.handle, code: code)
        }
    }

    func readValue(at handle: UInt16, context: ATTServerContext) async throws(ATTRequestFailure) -> [UInt8] {
        try await read(try attribute(at: handle), context: context)
    }

    /// The attribute at `handle` once a write to it is allowed on a link protected as
    /// `security` (the link's, or what a verified signature proves).
    func writable(
        _ handle: UInt16, context: ATTServerContext, security: ATTLinkSecurity
    ) async throws(ATTRequestFailure) -> ATTAttribute {
        let attribute = try attribute(at: handle)
        try await check(attribute, .write, context: context, security: security)
        return attribute
    }

    func checkLength(_ value: [UInt8], at handle: UInt16) throws(ATTRequestFailure) {
        guard value.count <= ATTConstants.maximumAttributeValueLength else {
            throw ATTRequestFailure(handle: handle, code: .invalidAttributeValueLength)
        }
    }

    // MARK: Read Multiple Variable (3.4.4.11)

    private func readMultipleVariable(
        _ r: ReadMultipleVariableRequest, context: ATTServerContext, mtu: Int
    ) async throws(ATTRequestFailure) -> ATTPDU {
        var values: [[UInt8]] = []
        for handle in r.setOfHandles { values.append(try await readValue(at: handle, context: context)) }
        var tuples: [ReadMultipleVariableResponse.LengthValue] = []
        var room = mtu - 1
        for value in values {
            // The list is cut at ATT_MTU - 1 octets (3.4.4.12); a cut inside a Value Length
            // field would leave a byte no client can read, so a tuple starts only with room
            // for its length and at least part of its value (or all of an empty one).
            guard room >= 2 + min(1, value.count) else { break }
            let part = Array(value.prefix(room - 2))
            room -= 2 + part.count
            // Cannot fail: part is a prefix of a value of at most 512 octets.
            guard let tuple = try? ReadMultipleVariableResponse.LengthValue(
                valueLength: UInt16(value.count), attributeValue: part) else { break }
            tuples.append(tuple)
            if part.count < value.count { break }
        }
        guard let response = try? ReadMultipleVariableResponse(lengthValueTupleList: tuples) else {
            // Only when ATT_MTU leaves no room for one tuple, which 23 always does.
            throw ATTRequestFailure(handle: r.setOfHandles.first ?? 0, code: .unlikelyError)
        }
        return .readMultipleVariableResponse(response)
    }
}
