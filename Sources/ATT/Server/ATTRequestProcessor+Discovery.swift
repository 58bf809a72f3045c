import BluetoothCore

// The requests that walk a handle range (Core 5.4 Vol 3 Part F 3.4.3, 3.4.4.1, 3.4.4.9):
// lists packed into the ATT_MTU, every element of one response the same size, Attribute Not
// Found when nothing matched.
extension ATTRequestProcessor {
    func findInformation(_ r: FindInformationRequest, mtu: Int) throws(ATTRequestFailure) -> ATTPDU {
        let range = try checkRange(r.startingHandle, r.endingHandle)
        // Opcode and Format take 2 octets; an element is a handle and a 2- or 16-octet UUID.
        let found = store.attributes(in: range, limit: (mtu - 2) / 4).filter { range.contains($0.handle) }
        guard let first = found.first else { throw ATTRequestFailure(handle: r.startingHandle, code: .attributeNotFound) }
        // All one format: the list stops at the first type of the other width (3.4.3.2).
        let width = ATTUUIDWidth(shortestFor: first.type)
        let fitting = found.prefix { ATTUUIDWidth(shortestFor: $0.type) == width }.prefix((mtu - 2) / (2 + width.byteCount))
        let data = fitting.map { FindInformationResponse.InformationData(handle: $0.handle, type: $0.type) }
        guard let response = try? FindInformationResponse(format: width, informationData: data) else {
            throw ATTRequestFailure(handle: r.startingHandle, code: .unlikelyError)
        }
        return .findInformationResponse(response)
    }

    /// Matches values read through the store, so only attributes this client may read
    /// without a requirement the link lacks (or an authorization, which may wait for a
    /// person) are considered; the others are passed over as if their value differed.
    func findByTypeValue(
        _ r: FindByTypeValueRequest, context: ATTServerContext, mtu: Int
    ) async throws(ATTRequestFailure) -> ATTPDU {
        let range = try checkRange(r.startingHandle, r.endingHandle)
        let type = BluetoothUUID(r.attributeType)
        var found: [FindByTypeValueResponse.HandlesInformation] = []
        let capacity = (mtu - 1) / 4
        var walk = AttributeWalk(store: store, range: range)
        while found.count < capacity, let attribute = walk.next() {
            guard attribute.type == type, let access = attribute.permissions.read,
                  access.denial(on: context.security) == nil, !access.requiresAuthorization,
                  case .success(let value) = await store.read(attribute, context: context),
                  value == r.attributeValue
            else { continue }
            found.append(.init(foundAttributeHandle: attribute.handle, groupEndHandle: attribute.groupEnd ?? attribute.handle))
        }
        guard let response = try? FindByTypeValueResponse(handlesInformationList: found) else {
            throw ATTRequestFailure(handle: r.startingHandle, code: .attributeNotFound)
        }
        return .findByTypeValueResponse(response)
    }

    func readByType(_ r: ReadByTypeRequest, context: ATTServerContext, mtu: Int) async throws(ATTRequestFailure) -> ATTPDU {
        let range = try checkRange(r.startingHandle, r.endingHandle)
        // Opcode and Length take 2 octets, each element a handle and the value cut to
        // min(ATT_MTU - 4, 253) (3.4.4.2).
        let entries = try await collectValues(
            in: range, type: r.attributeType, context: context, header: 2, elementHeader: 2, valueLimit: min(mtu - 4, 253), mtu: mtu)
        let list = entries.map { ReadByTypeResponse.AttributeData(attributeHandle: $0.attribute.handle, attributeValue: $0.value) }
        guard let response = try? ReadByTypeResponse(attributeDataList: list) else {
            throw ATTRequestFailure(handle: r.startingHandle, code: .attributeNotFound)
        }
        return .readByTypeResponse(response)
    }

    /// Only the GATT grouping types, «Primary Service» and «Secondary Service», group
    /// (Vol 3 Part G 2.5.3); any other type is Unsupported Group Type (0x10).
    func readByGroupType(
        _ r: ReadByGroupTypeRequest, context: ATTServerContext, mtu: Int
    ) async throws(ATTRequestFailure) -> ATTPDU {
        let range = try checkRange(r.startingHandle, r.endingHandle)
        guard Self.groupingTypes.contains(r.attributeGroupType) else {
            throw ATTRequestFailure(handle: r.startingHandle, code: .unsupportedGroupType)
        }
        // Opcode and Length take 2 octets, each element two handles and the value cut to
        // min(ATT_MTU - 6, 251) (3.4.4.10).
        let entries = try await collectValues(
            in: range, type: r.attributeGroupType, context: context, header: 2, elementHeader: 4, valueLimit: min(mtu - 6, 251), mtu: mtu)
        let list = entries.map {
            ReadByGroupTypeResponse.AttributeData(
                attributeHandle: $0.attribute.handle, endGroupHandle: $0.attribute.groupEnd ?? $0.attribute.handle,
                attributeValue: $0.value)
        }
        guard let response = try? ReadByGroupTypeResponse(attributeDataList: list) else {
            throw ATTRequestFailure(handle: r.startingHandle, code: .attributeNotFound)
        }
        return .readByGroupTypeResponse(response)
    }

    static let groupingTypes: [BluetoothUUID] = [BluetoothUUID(UInt16(0x2800)), BluetoothUUID(UInt16(0x2801))]

    /// The values of the attributes of `type` in `range`, as many as fit: the first
    /// attribute that would cause an Error Response ends the list, and is that response
    /// when it comes first (3.4.4.1); the first value of another length ends it too (every
    /// element of a response has one size). Values are cut to `valueLimit`.
    private func collectValues(
        in range: ClosedRange<UInt16>, type: BluetoothUUID, context: ATTServerContext,
        header: Int, elementHeader: Int, valueLimit: Int, mtu: Int
    ) async throws(ATTRequestFailure) -> [(attribute: ATTAttribute, value: [UInt8])] {
        var entries: [(attribute: ATTAttribute, value: [UInt8])] = []
        var fullLength: Int?
        var used = header
        var walk = AttributeWalk(store: store, range: range)
        while let attribute = walk.next() {
            guard attribute.type == type else { continue }
            if let fullLength, used + elementHeader + min(fullLength, valueLimit) > mtu { break }
            let value: [UInt8]
            do {
                value = try await read(attribute, context: context)
            } catch {
                if entries.isEmpty { throw error }
                break
            }
            if let fullLength, value.count != fullLength { break }
            fullLength = value.count
            let part = Array(value.prefix(valueLimit))
            entries.append((attribute, part))
            used += elementHeader + part.count
        }
        return entries
    }
}

/// The attributes of a handle range in ascending order, asked of the store a page at a
/// time, so a wide range costs what it holds rather than 65,535 look-ups.
struct AttributeWalk {
    let store: any ATTAttributeStore
    let range: ClosedRange<UInt16>
    private var nextStart: UInt16?
    private var page: [ATTAttribute] = []
    private var index = 0

    init(store: any ATTAttributeStore, range: ClosedRange<UInt16>) {
        self.store = store
        self.range = range
        nextStart = range.lowerBound
    }

    mutating func next() -> ATTAttribute? {
        while index >= page.count {
            guard let start = nextStart else { return nil }
            // Attributes outside the range, or not past the previous page, are ignored, so
            // a store that breaks its promise cannot make the walk repeat or stall.
            page = store.attributes(in: start...range.upperBound, limit: ATTRequestProcessor.walkPage)
                .filter { $0.handle >= start && $0.handle <= range.upperBound }
                .sorted { $0.handle < $1.handle }
            index = 0
            guard let last = page.map(\.handle).max(), last < range.upperBound else {
                nextStart = nil
                continue
            }
            nextStart = last + 1
        }
        defer { index += 1 }
        return page[index]
    }
}
