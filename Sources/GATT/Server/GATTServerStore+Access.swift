import ATT

/// How a read or write is done: now, under the lock, or by an application handler after
/// the lock is released.
enum GATTReadPlan {
    case value([UInt8])
    case failure(ATTErrorCode)
    case handler(GATTAttributeHandler.Read)
}

enum GATTWritePlan {
    /// Done under the lock: nil on success, else the error to answer with.
    case done(ATTErrorCode?)
    case handler(GATTAttributeHandler.Write)
}

extension GATTServerStore.State {
    mutating func readPlan(_ attribute: ATTAttribute, context: ATTServerContext) -> GATTReadPlan {
        guard let index = index(of: attribute) else { return .failure(.invalidHandle) }
        switch table.sources[index] {
        case .declaration(let value):
            return .value(value)
        case .characteristicValue, .descriptor:
            let (handler, value) = application(table.sources[index])
            if let read = handler?.read { return .handler(read) }
            return .value(value ?? [])
        case .clientConfiguration(let valueHandle, _):
            return .value((client(context)?.configurations[valueHandle] ?? []).bytes)
        case .clientSupportedFeatures:
            return .value([client(context)?.supportedFeatures.rawValue ?? 0])
        case .databaseHash:
            if client(context)?.isChangeAware == false { clients[context.bearer]?.readHashWhileUnaware = true }
            return .value(hash)
        case .serviceChanged:
            return .failure(.readNotPermitted)
        }
    }

    mutating func write(_ value: [UInt8], to attribute: ATTAttribute, context: ATTServerContext) -> GATTWritePlan {
        guard let index = index(of: attribute) else { return .done(.invalidHandle) }
        switch table.sources[index] {
        case .declaration, .databaseHash, .serviceChanged:
            return .done(.writeNotPermitted)
        case .characteristicValue, .descriptor:
            if let write = application(table.sources[index]).handler?.write { return .handler(write) }
            store(value, at: table.sources[index])
            return .done(nil)
        case .clientConfiguration(let valueHandle, let properties):
            return .done(writeConfiguration(value, valueHandle: valueHandle, properties: properties, context: context))
        case .clientSupportedFeatures:
            return .done(writeSupportedFeatures(value, context: context))
        }
    }

    /// Where `attribute` is in the table, only if it is still there as the server checked it:
    /// the ATT server checks permissions before it reads or writes, and in between (a
    /// handler's wait, an Execute Write's earlier values) the application may have removed
    /// the service and laid another out at the same handles. Invalid Handle then, rather than
    /// a value read from or written into an attribute whose permissions were never checked.
    func index(of attribute: ATTAttribute) -> Int? {
        guard let index = table.index(of: attribute.handle), table.attributes[index] == attribute else { return nil }
        return index
    }

    /// The handler and stored value of a characteristic value or descriptor.
    func application(_ source: GATTAttributeTable.Source) -> (handler: GATTAttributeHandler?, value: [UInt8]?) {
        switch source {
        case .characteristicValue(let path):
            let characteristic = database.services[path.service].characteristics[path.characteristic]
            return (characteristic.handler, characteristic.value)
        case .descriptor(let path, let index):
            let descriptor = database.services[path.service].characteristics[path.characteristic].descriptors[index]
            return (descriptor.handler, descriptor.value)
        default:
            return (nil, nil)
        }
    }

    /// Replaces the stored value of a characteristic value or descriptor; false for any
    /// other attribute.
    @discardableResult
    mutating func store(_ value: [UInt8], at source: GATTAttributeTable.Source) -> Bool {
        switch source {
        case .characteristicValue(let path):
            database.services[path.service].characteristics[path.characteristic].value = value
        case .descriptor(let path, let index):
            database.services[path.service].characteristics[path.characteristic].descriptors[index].value = value
        default:
            return false
        }
        return true
    }

    /// A CCCD write (Part G 3.3.3.3): exactly two octets, else Invalid Attribute Value
    /// Length (0x0D). Reserved bits are ignored (not kept), as reserved fields are on
    /// receipt. Asking for notifications or indications the characteristic's properties do
    /// not offer is Value Not Allowed (0x13): keeping it would promise updates that never
    /// come. A closed bearer's write changes nothing (Unlikely Error, which nobody reads).
    private mutating func writeConfiguration(
        _ value: [UInt8], valueHandle: UInt16, properties: CharacteristicProperties, context: ATTServerContext
    ) -> ATTErrorCode? {
        guard value.count == 2 else { return .invalidAttributeValueLength }
        let asked = ClientCharacteristicConfiguration(rawValue: UInt16(value[0]) | UInt16(value[1]) << 8)
            .intersection([.notification, .indication])
        if asked.contains(.notification), !properties.contains(.notify) { return .valueNotAllowed }
        if asked.contains(.indication), !properties.contains(.indicate) { return .valueNotAllowed }
        let kept: Void? = changeClient(context) { $0.configurations[valueHandle] = asked.isEmpty ? nil : asked }
        return kept == nil ? .unlikelyError : nil
    }

    /// A Client Supported Features write (Part G 7.2): at least one octet; a bit the client
    /// set may not be cleared (Value Not Allowed, 0x13); reserved bits and octets are not
    /// kept.
    private mutating func writeSupportedFeatures(_ value: [UInt8], context: ATTServerContext) -> ATTErrorCode? {
        guard let first = value.first else { return .invalidAttributeValueLength }
        let asked = GATTClientSupportedFeatures(rawValue: first).intersection(.defined)
        let current = client(context)?.supportedFeatures ?? []
        guard asked.isSuperset(of: current) else { return .valueNotAllowed }
        let kept: Void? = changeClient(context) { $0.supportedFeatures = asked }
        return kept == nil ? .unlikelyError : nil
    }

    // MARK: Per-client state

    /// Whether `context`'s bearer closed (``GATTServerStore/bearerClosed(_:)``).
    func isClosed(_ context: ATTServerContext) -> Bool {
        guard let closed = closedInstances[context.bearer] else { return false }
        return context.instance <= closed
    }

    /// The client of `context`'s bearer; nil before its first write, and for a bearer that
    /// closed or whose number a later bearer took.
    func client(_ context: ATTServerContext) -> GATTServerClient? {
        guard let client = clients[context.bearer], client.instance == context.instance else { return nil }
        return client
    }

    /// Changes the client of `context`'s bearer (made on its first change). Nil, changing
    /// nothing, for a bearer that closed or whose number a later bearer took: a request
    /// still running when its bearer closed must leave nothing for the next bearer given
    /// the number (the controller reuses a connection handle at once).
    mutating func changeClient<Result>(_ context: ATTServerContext, _ change: (inout GATTServerClient) -> Result) -> Result? {
        if isClosed(context) { return nil }
        var client = clients[context.bearer] ?? GATTServerClient(instance: context.instance)
        guard client.instance <= context.instance else { return nil }
        // An earlier bearer's entry its close never removed (its server was dropped).
        if client.instance < context.instance { client = GATTServerClient(instance: context.instance) }
        let result = change(&client)
        clients[context.bearer] = client
        return result
    }
}
