import ATT
import BluetoothCore

extension GATTServerStore.State {
    /// Robust caching (Core 5.4 Vol 3 Part G 2.5.2.1), for a client that enabled it in its
    /// Client Supported Features (a client that did not cannot read Database Out Of Sync,
    /// so it is never sent one; BlueZ decides the same). While it is change-unaware:
    /// - its commands are ignored;
    /// - the first request the specification names gets Database Out Of Sync (0x12): one
    ///   at an attribute handle or a list of them (Read, Read Blob, Read Multiple and
    ///   Multiple Variable, Write, Prepare and Execute Write), or a Read By Type of a type
    ///   other than «Include» or «Characteristic» over less than 0x0001-0xFFFF. Exchange
    ///   MTU and discovery by range are served: the client needs them to catch up, and
    ///   reads the Database Hash with a Read By Type over the whole range;
    /// - after that 0x12, or after it read the Database Hash, its next request makes it
    ///   change-aware, and is served;
    /// - nothing but the Service Changed indication is sent to it (``recipients(of:)``).
    /// `becameAware`: this request made the client change-aware (a bond keeps that).
    mutating func admit(_ request: ATTPDU, context: ATTServerContext) -> (error: ATTErrorCode?, becameAware: Bool) {
        guard var client = client(context), client.supportedFeatures.contains(.robustCaching), !client.isChangeAware else {
            return (nil, false)
        }
        defer { clients[context.bearer] = client }
        switch request.opcode.kind {
        case .command:
            return (.databaseOutOfSync, false)
        case .request:
            break
        case .response, .notification, .indication, .confirmation, nil:
            return (nil, false)
        }
        if client.sentOutOfSync || client.readHashWhileUnaware {
            client.isChangeAware = true
            client.sentOutOfSync = false
            client.readHashWhileUnaware = false
            return (nil, true)
        }
        guard Self.getsOutOfSync(request) else { return (nil, false) }
        client.sentOutOfSync = true
        return (.databaseOutOfSync, false)
    }

    /// The requests Part G 2.5.2.1 answers with Database Out Of Sync for a change-unaware
    /// client.
    static func getsOutOfSync(_ request: ATTPDU) -> Bool {
        switch request {
        case .readRequest, .readBlobRequest, .readMultipleRequest, .readMultipleVariableRequest,
             .writeRequest, .prepareWriteRequest:
            return true
        case let .executeWriteRequest(execute):
            // Writing the queued parts acts on their handles; cancelling them acts on none.
            return execute.flags != .cancelAllPreparedWrites
        case let .readByTypeRequest(read):
            let declaration = read.attributeType == GATTUUID.include || read.attributeType == GATTUUID.characteristicDeclaration
            return !declaration && (read.startingHandle != 0x0001 || read.endingHandle != 0xFFFF)
        default:
            return false
        }
    }

    func bondedState(of client: GATTServerClient) -> GATTBondedClientState {
        var types: [UInt16: BluetoothUUID] = [:]
        for characteristic in database.services.flatMap(\.characteristics) where client.configurations[characteristic.valueHandle] != nil {
            types[characteristic.valueHandle] = characteristic.uuid
        }
        return GATTBondedClientState(
            configurations: client.configurations.mapValues(\.rawValue), characteristicTypes: types,
            supportedFeatures: client.supportedFeatures.rawValue, databaseHash: hash, wasChangeAware: client.isChangeAware)
    }

    /// ``GATTServerStore/recipients(of:)`` under the lock, kept until a client or the
    /// layout changes: a stream of notifications asks for the same answer every time.
    mutating func recipients(of valueHandle: UInt16) -> GATTRecipients {
        if let known = recipientsByValueHandle[valueHandle] { return known }
        let serviceChanged = valueHandle == table.handle(of: .serviceChanged)
        var subscribers: [GATTRecipients.Subscriber] = []
        var withheld: [UInt16] = []
        for (bearer, client) in clients.sorted(by: { $0.key < $1.key }) {
            guard let configuration = client.configurations[valueHandle] else { continue }
            if !serviceChanged, !client.isChangeAware, client.supportedFeatures.contains(.robustCaching) {
                withheld.append(bearer)
            } else {
                subscribers.append(GATTRecipients.Subscriber(bearer: bearer, configuration: configuration))
            }
        }
        let recipients = GATTRecipients(subscribers: subscribers, withheld: withheld, access: table.deliveryAccess(of: valueHandle))
        recipientsByValueHandle[valueHandle] = recipients
        return recipients
    }
}

extension GATTServerStore {
    /// What a bond keeps of the client on `bearer`: its CCCDs, its Client Supported
    /// Features, and whether it was change-aware under which hash.
    public func bondedState(bearer: UInt16) -> GATTBondedClientState {
        state.withLock { $0.bondedState(of: $0.clients[bearer] ?? GATTServerClient()) }
    }

    /// ``bondedState(bearer:)`` of the bearer `context` names, nil once it closed or
    /// another bearer took its number: what a bond saves must be its own central's.
    public func bondedState(_ context: ATTServerContext) -> GATTBondedClientState? {
        state.withLock { state in
            if state.isClosed(context) { return nil }
            let client = state.clients[context.bearer] ?? GATTServerClient(instance: context.instance)
            return client.instance == context.instance ? state.bondedState(of: client) : nil
        }
    }

    /// Restores a bonded client's state on a new `bearer` (Part G 2.5.2.1): it is
    /// change-aware only when it was and the database is the one it was then. A CCCD comes
    /// back only onto a characteristic of the type it was written for (when the state
    /// recorded it) that can still notify or indicate, so a changed database never keeps a
    /// subscription on a handle that now means something else.
    ///
    /// A restore that runs after the bearer closed (``bearerClosed(_:)``) leaves nothing
    /// for the next client the handle is given to.
    public func restoreBondedState(_ bonded: GATTBondedClientState, context: ATTServerContext) {
        state.withLock { state in
            var characteristics: [UInt16: GATTDatabase.Characteristic] = [:]
            for characteristic in state.database.services.flatMap(\.characteristics) {
                characteristics[characteristic.valueHandle] = characteristic
            }
            var client = GATTServerClient(instance: context.instance)
            for (valueHandle, bits) in bonded.configurations {
                let characteristic = characteristics[valueHandle]
                if let recorded = bonded.characteristicTypes[valueHandle], recorded != characteristic?.uuid { continue }
                var kept = ClientCharacteristicConfiguration(rawValue: bits).intersection([.notification, .indication])
                let offered = characteristic?.properties ?? []
                if !offered.contains(.notify) { kept.remove(.notification) }
                if !offered.contains(.indicate) { kept.remove(.indication) }
                if !kept.isEmpty { client.configurations[valueHandle] = kept }
            }
            client.supportedFeatures = GATTClientSupportedFeatures(rawValue: bonded.supportedFeatures).intersection(.defined)
            client.isChangeAware = bonded.wasChangeAware && bonded.databaseHash == state.hash
            _ = state.changeClient(context) { $0 = client }
        }
    }
}
