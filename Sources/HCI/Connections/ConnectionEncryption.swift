import BluetoothCore

/// Whether a link is encrypted, and with how long a key.
public struct LinkEncryption: Sendable, Hashable {
    public var isEncrypted: Bool = false
    /// Octets; nil until an Encryption Change v2 or Read Encryption Key Size told.
    public var keySize: Int?

    public init(isEncrypted: Bool = false, keySize: Int? = nil) {
        self.isEncrypted = isEncrypted
        self.keySize = keySize
    }
}

/// What happened to a link's encryption, told synchronously on the transport's reader
/// thread, in order with the link's data (so SMP sees the encryption before the keys the
/// peer sends over it).
public enum EncryptionEvent: Sendable, Hashable {
    /// Encryption Change (on) or Encryption Key Refresh Complete; key size when known.
    case encrypted(keySize: Int?)
    /// Encryption Change with encryption off (status success).
    case unencrypted
    /// Encryption Change or Key Refresh with an error status.
    case failed(HCIErrorCode)
}

extension Connection {
    /// Peripheral: answers the controller's LE Long Term Key Request. Called on the reader
    /// thread with EDIV and Rand; return the key (16 octets, least significant first) or
    /// nil for a negative reply. Keep it short: a lookup, no waiting.
    public typealias LongTermKeyProvider = @Sendable (_ encryptedDiversifier: UInt16, _ randomNumber: UInt64) -> [UInt8]?
    public typealias EncryptionHandler = @Sendable (EncryptionEvent) -> Void

    public var encryption: LinkEncryption { state.withLock { $0.encryption } }

    /// Sets (nil removes) the one answerer of LTK requests; without one every request gets
    /// a negative reply, so the link stays unencrypted rather than using a made-up key.
    public func setLongTermKeyProvider(_ provider: LongTermKeyProvider?) {
        state.withLock { $0.longTermKeyProvider = provider }
    }

    /// Sets (nil removes) the one observer of encryption events (SMP's driver).
    public func setEncryptionHandler(_ handler: EncryptionHandler?) {
        state.withLock { $0.encryptionHandler = handler }
    }

    /// Central: starts encryption with `longTermKey` (16 octets, least significant first,
    /// as HCI carries it) via LE Enable Encryption and waits for Encryption Change or
    /// Encryption Key Refresh Complete. Then checks the key size (from Encryption Change
    /// v2, else Read Encryption Key Size when the controller has it) against
    /// `minimumKeySize`.
    ///
    /// Throws ``ConnectionError/encryptionFailed(_:)`` when the controller reports a
    /// failure (the peer had no key: 0x06; a different key: 0x3D, after which the link
    /// drops) and ``ConnectionError/encryptionKeyTooShort(_:minimum:)`` for a short key.
    @discardableResult
    public func enableEncryption(
        longTermKey: [UInt8], encryptedDiversifier: UInt16 = 0, randomNumber: UInt64 = 0,
        minimumKeySize: Int = 7, timeout: Duration = .seconds(10)
    ) async throws(ConnectionError) -> LinkEncryption {
        guard role == .central else { throw .invalidParameters("only the central starts encryption; as peripheral send an SMP Security Request") }
        try requireEncryptionCommand()
        let command: LEEnableEncryption
        do {
            command = try LEEnableEncryption(connectionHandle: handle, randomNumber: randomNumber, encryptedDiversifier: encryptedDiversifier, longTermKey: longTermKey)
        } catch {
            throw .invalidParameters("a long-term key has 16 octets, not \(longTermKey.count)")
        }
        let event = try await perform(command, expecting: .encryption, name: "LE Enable Encryption", timeout: timeout)
        var keySize: Int?
        if case let .encrypted(size) = event { keySize = size }
        if keySize == nil { keySize = try await readKeySize() }
        if let keySize, keySize < minimumKeySize { throw .encryptionKeyTooShort(keySize, minimum: minimumKeySize) }
        return encryption
    }

    /// Read Encryption Key Size; also kept in ``encryption``. Nil when the controller
    /// does not have the command; a failed read throws (a key whose size is unknown must
    /// not pass a size check).
    public func readKeySize() async throws(ConnectionError) -> Int? {
        guard controller.info?.supports(ReadEncryptionKeySize.self) == true else { return nil }
        let answer: ReadEncryptionKeySize.ReturnParameters
        do {
            answer = try await controller.send(ReadEncryptionKeySize(connectionHandle: handle))
        } catch {
            throw .controller(error)
        }
        let size = Int(answer.keySize)
        state.withLock { $0.encryption.keySize = size }
        return size
    }

    private func requireEncryptionCommand() throws(ConnectionError) {
        guard let info = controller.info else { throw .controllerNotReady }
        guard info.supports(LEEnableEncryption.self), info.leFeatures.contains(.leEncryption) else {
            throw .unsupported("LE Encryption")
        }
    }

    // MARK: Events (reader thread)

    func encryptionChanged(_ event: HCIEvent.EncryptionChange) {
        let notice: EncryptionEvent
        let outcome: WaitOutcome<LinkEvent, ConnectionError>
        if event.status != .success {
            notice = .failed(event.status)
            outcome = .failed(.encryptionFailed(event.status))
        } else if event.isEncrypted {
            let size = event.keySize.map(Int.init)
            notice = .encrypted(keySize: size)
            outcome = .value(.encrypted(keySize: size))
        } else {
            notice = .unencrypted
            outcome = .failed(.encryptionFailed(.unspecifiedError))
        }
        let (handler, resumptions) = state.withLock { state in
            if event.status == .success {
                state.encryption = LinkEncryption(isEncrypted: event.isEncrypted, keySize: event.keySize.map(Int.init))
            }
            return (state.encryptionHandler, state.expectations.fulfill(.encryption, with: outcome))
        }
        handler?(notice)
        for resumption in resumptions { resumption.resume() }
    }

    func encryptionKeyRefreshed(_ event: HCIEvent.EncryptionKeyRefreshComplete) {
        let success = event.status == .success
        let (handler, size, resumptions) = state.withLock { state in
            let size = state.encryption.keySize
            let outcome: WaitOutcome<LinkEvent, ConnectionError> = success ? .value(.encrypted(keySize: size)) : .failed(.encryptionFailed(event.status))
            return (state.encryptionHandler, size, state.expectations.fulfill(.encryption, with: outcome))
        }
        handler?(success ? .encrypted(keySize: size) : .failed(event.status))
        for resumption in resumptions { resumption.resume() }
    }

    func longTermKeyRequested(_ request: LELongTermKeyRequest) {
        let provider = state.withLock { $0.longTermKeyProvider }
        var key = provider?(request.encryptedDiversifier, request.randomNumber)
        // An all-zero key is never a key pairing produced ("zero LTK" attacks): refuse it.
        if let candidate = key, candidate.count != 16 || candidate.allSatisfy({ $0 == 0 }) { key = nil }
        let handle = self.handle
        let controller = self.controller
        Task { [weak self] in
            // A link that ended meanwhile gets no reply: the controller may already have
            // given its handle to the next link, whose own request this would answer.
            guard let self, isConnected else { return }
            if let key, let reply = try? LELongTermKeyRequestReply(connectionHandle: handle, longTermKey: key) {
                _ = try? await controller.send(reply)
            } else {
                _ = try? await controller.send(LELongTermKeyRequestNegativeReply(connectionHandle: handle))
            }
        }
    }
}
