import ATT

extension GATTServerStore.State {
    /// Robust caching (Core 5.4 Vol 3 Part G 2.5.2.1), for a client that enabled it in its
    /// Client Supported Features (a client that did not cannot read Database Out Of Sync,
    /// so it is never sent one; BlueZ decides the same):
    /// - a change-unaware client's commands are ignored;
    /// - its first request is answered Database Out Of Sync (0x12), except Exchange MTU
    ///   (no attribute involved) and a Read By Type of the Database Hash (0x2B2A), the
    ///   way the specification gives it to find out; either then lets its next request make
    ///   it change-aware, and that request is served.
    /// `becameAware`: this request made the client change-aware (a bond keeps that).
    mutating func admit(_ request: ATTPDU, bearer: UInt16) -> (error: ATTErrorCode?, becameAware: Bool) {
        guard var client = clients[bearer], client.supportedFeatures.contains(.robustCaching), !client.isChangeAware else {
            return (nil, false)
        }
        defer { clients[bearer] = client }
        switch request.opcode.kind {
        case .command:
            return (.databaseOutOfSync, false)
        case .request:
            break
        case .response, .notification, .indication, .confirmation, nil:
            return (nil, false)
        }
        if case .exchangeMTURequest = request { return (nil, false) }
        if case .readByTypeRequest(let read) = request, read.attributeType == GATTUUID.databaseHash { return (nil, false) }
        if client.sentOutOfSync || client.readHashWhileUnaware {
            client.isChangeAware = true
            client.sentOutOfSync = false
            client.readHashWhileUnaware = false
            return (nil, true)
        }
        client.sentOutOfSync = true
        return (.databaseOutOfSync, false)
    }
}

extension GATTServerStore {
    /// What a bond keeps of the client on `bearer`: its CCCDs, its Client Supported
    /// Features, and whether it was change-aware under which hash.
    public func bondedState(bearer: UInt16) -> GATTBondedClientState {
        state.withLock { state in
            let client = state.clients[bearer] ?? GATTServerClient()
            return GATTBondedClientState(
                configurations: client.configurations.mapValues(\.rawValue),
                supportedFeatures: client.supportedFeatures.rawValue,
                databaseHash: state.hash, wasChangeAware: client.isChangeAware
            )
        }
    }

    /// Restores a bonded client's state on a new `bearer` (Part G 2.5.2.1): it is
    /// change-aware only when it was and the database is the one it was then. CCCDs of
    /// characteristics that can no longer notify or indicate are dropped, so a changed
    /// database never keeps a subscription on a handle that now means something else.
    ///
    /// `isOpen` is asked under the store's lock: a restore that runs after the bearer
    /// closed (its server's closing, which ends with ``bearerClosed(_:)``, comes first)
    /// leaves nothing for the next client the handle is given to. It must not call into
    /// the store.
    public func restoreBondedState(_ bonded: GATTBondedClientState, bearer: UInt16, ifOpen isOpen: () -> Bool) {
        state.withLock { state in
            guard isOpen() else { return }
            var properties: [UInt16: CharacteristicProperties] = [:]
            for characteristic in state.database.services.flatMap(\.characteristics) {
                properties[characteristic.valueHandle] = characteristic.properties
            }
            var client = GATTServerClient()
            for (valueHandle, bits) in bonded.configurations {
                var kept = ClientCharacteristicConfiguration(rawValue: bits).intersection([.notification, .indication])
                let offered = properties[valueHandle] ?? []
                if !offered.contains(.notify) { kept.remove(.notification) }
                if !offered.contains(.indicate) { kept.remove(.indication) }
                if !kept.isEmpty { client.configurations[valueHandle] = kept }
            }
            client.supportedFeatures = GATTClientSupportedFeatures(rawValue: bonded.supportedFeatures).intersection(.defined)
            client.isChangeAware = bonded.wasChangeAware && bonded.databaseHash == state.hash
            state.clients[bearer] = client
        }
    }
}
