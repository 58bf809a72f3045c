import BluetoothCore
import HCI

/// One link's pairing (Core Vol 3 Part H 2.3, 3.5), as a pure state machine: inputs in
/// (``PairingInput``), actions out (``PairingAction``). It does no I/O, reads no clock and
/// takes its randomness from an injected generator, so a scripted conversation replays
/// exactly. ``SecurityManager`` runs it over a connection.
///
/// Both roles: the central is always the initiator, the peripheral the responder. Legacy
/// pairing (Just Works, Passkey Entry, OOB) and LE Secure Connections (Just Works, Numeric
/// Comparison, Passkey Entry, OOB). A PDU that is not expected in the current step ends
/// the pairing with Pairing Failed; after the SMP timer expired nothing more is sent.
public struct PairingMachine: Sendable {
    public enum Role: Sendable, Hashable {
        case initiator, responder
    }

    public let role: Role
    /// The most actions one input produces (a responder's whole key distribution with its
    /// timer actions and end).
    public static let maximumActionsPerInput = 10
    public private(set) var configuration: PairingConfiguration
    /// Our address on this link, as the peer sees it.
    public let localAddress: DeviceAddress
    public let peerAddress: DeviceAddress
    /// Set by the driver while this peer is in the repeated-attempts wait: a new pairing
    /// it starts is refused with Repeated Attempts.
    public var repeatedAttemptsBlocked = false
    /// Set by the driver before a Pairing Request or Response is handled: the protection
    /// of the bond the peer already has with us, if any (see
    /// ``PairingConfiguration/refusesWeakerRepairing``).
    public var storedBondStrength: KeyStrength?

    var random: any RandomNumberGenerator & Sendable
    var step: Step = .idle
    var context = Context()
    /// Our P-256 pair, made once per machine so our OOB data stays valid for it, and
    /// replaced after a failed pairing as the specification requires.
    var keyPair: P256KeyPair?
    var localOOBRandom: SMPValue128?

    enum Step: Sendable, Hashable {
        case idle
        case awaitingPairingResponse
        case legacyAwaitingConfirm
        case legacyAwaitingRandom
        case awaitingPublicKey
        case secureAwaitingConfirm
        case secureAwaitingRandom
        case awaitingDHKeyCheck
        case awaitingEncryption
        case distributingKeys
        case complete
        case failed
        case timedOut
    }

    /// Everything one pairing attempt learns; reset when a new one starts.
    struct Context: Sendable {
        var request: PairingFeatures?
        var response: PairingFeatures?
        var secureConnections = false
        var method: PairingMethod = .justWorks
        var keySize = 16
        var bonding = false
        /// Legacy TK, or the passkey as a number under Secure Connections.
        var temporaryKey: SMPValue128?
        var passkey: UInt32?
        var waitingForUser = false
        var localRandom: SMPValue128?
        var peerConfirm: SMPValue128?
        var peerRandom: SMPValue128?
        var shortTermKey: SMPValue128?
        // Secure Connections
        var peerPublicKey: P256PublicKey?
        var dhKey: SMPValue256?
        var round = 0
        var initiatorNonce: SMPValue128?
        var responderNonce: SMPValue128?
        var macKey: SMPValue128?
        var longTermKey: SMPValue128?
        var userConfirmed = false
        var heldDHKeyCheck: SMPValue128?
        // Key distribution
        var keys: PairingKeys?
        var expectedFromPeer: [SMPCode] = []
        var sentOwnKeys = false
        /// The link's key size was checked (v2 event or Read Encryption Key Size).
        var keySizeChecked = false
        var pendingPeerLongTermKey: SMPValue128?
        var pendingPeerIRK: SMPValue128?
    }

    /// - Parameters:
    ///   - random: where randoms, passkeys, keys and the P-256 pair come from; the
    ///     system's secure generator unless a test injects a seeded one.
    public init(
        role: Role, configuration: PairingConfiguration, localAddress: DeviceAddress, peerAddress: DeviceAddress,
        random: any RandomNumberGenerator & Sendable = SystemRandomNumberGenerator()
    ) {
        self.role = role
        self.configuration = configuration
        self.localAddress = localAddress
        self.peerAddress = peerAddress
        self.random = random
    }

    /// Whether a pairing is running (started and neither finished, failed nor timed out).
    public var isPairing: Bool {
        switch step {
        case .idle, .complete, .failed, .timedOut: false
        default: true
        }
    }

    public var hasTimedOut: Bool { step == .timedOut }

    /// The method of the running or last pairing, once features were exchanged.
    public var method: PairingMethod? { context.response == nil ? nil : context.method }

    /// Replaces the peer's OOB data before a pairing starts (the delegate's answer);
    /// ignored while one runs.
    public mutating func setPeerOOBData(_ data: OOBData?) {
        guard !isPairing else { return }
        configuration.peerOOBData = data
    }

    /// Our Secure Connections OOB data for this machine's key pair, to give the peer out
    /// of band before pairing.
    public mutating func localOOBData() -> LocalOOBData {
        let pair = ownKeyPair()
        let r = localOOBRandom ?? nextRandom()
        localOOBRandom = r
        return LocalOOBData(random: r, confirm: CryptoToolbox.f4(u: pair.publicKey.x, v: pair.publicKey.x, x: r, z: 0))
    }

    // MARK: Input

    public mutating func handle(_ input: PairingInput) -> [PairingAction] {
        if step == .timedOut { return afterTimeout(input) }
        let wasPairing = isPairing
        // Routed first: `timed` must see the state after the input, not a copy from before.
        let actions = route(input)
        return timed(actions, wasPairing: wasPairing)
    }

    /// The timers around the actions of one input, in one place (Core Vol 3 Part H 3.4):
    /// the SMP timer and the pairing deadline start when a pairing starts; the SMP timer
    /// restarts whenever we queue a PDU of a running pairing, and only then (what the peer
    /// sends never restarts it: a peer chattering with PDUs we ignore cannot keep a pairing
    /// alive); both stop when the pairing ends.
    private func timed(_ actions: [PairingAction], wasPairing: Bool) -> [PairingAction] {
        var timers: [PairingAction] = []
        if !wasPairing, isPairing { timers.append(.startDeadline) }
        if isPairing, !wasPairing || actions.contains(where: \.isSend) { timers.append(.restartTimer) }
        if wasPairing, !isPairing { timers.append(.stopTimer) }
        return timers + actions
    }

    /// What the running pairing waits for, for a deadline's error.
    var stage: PairingStage {
        if context.waitingForUser { return .user }
        switch step {
        case .awaitingPairingResponse: return .pairingResponse
        case .awaitingEncryption: return .encryption
        case .distributingKeys: return context.keySizeChecked || !context.expectedFromPeer.isEmpty ? .keyDistribution : .encryption
        default: return .peerAuthentication
        }
    }

    private mutating func route(_ input: PairingInput) -> [PairingAction] {
        switch input {
        case .pair: return start()
        case let .received(bytes): return received(bytes)
        case let .passkeyEntered(passkey): return passkeyEntered(passkey)
        case let .numericComparisonConfirmed(accepted): return numericComparisonConfirmed(accepted)
        case let .longTermKeyRequested(ediv, rand): return longTermKeyRequested(ediv: ediv, rand: rand)
        case let .encryptionChanged(keySize): return encryptionChanged(keySize: keySize)
        case let .encryptionFailed(status): return encryptionFailed(status)
        case let .encryptionKeySizeRead(size):
            return encryptionKeySizeRead(size)
        case let .encryptionKeySizeUnreadable(status):
            return encryptionKeySizeUnreadable(status)
        case .timerExpired:
            guard isPairing else { return [] }
            step = .timedOut
            discardSecrets()
            return [.failed(.timedOut)]
        case let .deadlineExpired(after):
            guard isPairing else { return [] }
            return abort(.deadlineExceeded(stage, after: after))
        case .cancel:
            guard isPairing else { return [] }
            return abort(.cancelled)
        }
    }

    /// After a timeout no SMP command is sent on this link (Core Vol 3 Part H 3.4).
    private func afterTimeout(_ input: PairingInput) -> [PairingAction] {
        switch input {
        case .pair: [.failed(.linkTimedOutEarlier)]
        case .longTermKeyRequested: [.replyLongTermKey(nil)]
        default: []
        }
    }

    private mutating func start() -> [PairingAction] {
        guard !isPairing else { return [.failed(.busy)] }
        do {
            try configuration.validate()
        } catch {
            return [.failed(error)]
        }
        guard configuration.pairable else {
            return [.failed(.invalidConfiguration("pairing is switched off (pairable is false)"))]
        }
        switch role {
        case .responder:
            return [.send(.securityRequest(configuration.authenticationRequirements))]
        case .initiator:
            beginAttempt()
            let request = PairingFeatures(
                ioCapability: configuration.ioCapability, oobDataPresent: configuration.peerOOBData != nil,
                authenticationRequirements: configuration.authenticationRequirements, maximumEncryptionKeySize: 16,
                initiatorKeyDistribution: configuration.keysWeDistribute, responderKeyDistribution: configuration.keysWeRequest)
            context.request = request
            step = .awaitingPairingResponse
            return [.send(.pairingRequest(request))]
        }
    }

    mutating func beginAttempt() {
        context = Context()
    }

    private mutating func received(_ bytes: [UInt8]) -> [PairingAction] {
        let pdu: SMPPDU
        do {
            pdu = try SMPPDU(decoding: bytes)
        } catch {
            return fail(error.pairingFailedReason, "\(error)")
        }
        if case let .pairingFailed(reason) = pdu {
            guard isPairing else { return [] }
            step = .failed
            discardSecrets()
            return [.failed(.peerFailed(reason))]
        }
        return dispatch(pdu)
    }

    private mutating func dispatch(_ pdu: SMPPDU) -> [PairingAction] {
        switch (role, pdu) {
        case (.initiator, .pairingRequest), (.responder, .pairingResponse), (.responder, .securityRequest):
            return fail(.commandNotSupported, "\(pdu.code) is not for the \(role == .initiator ? "central" : "peripheral")")
        case let (.responder, .pairingRequest(features)):
            guard !isPairing else { return outOfState(pdu) }
            return pairingRequestReceived(features, bytes: pdu.encode())
        case let (.initiator, .securityRequest(requirements)):
            if isPairing { return [] }
            if repeatedAttemptsBlocked { return fail(.repeatedAttempts, "the peer asked again too soon after a failed pairing") }
            return [.securityRequested(requirements)]
        case let (.initiator, .pairingResponse(features)):
            guard step == .awaitingPairingResponse else { return outOfState(pdu) }
            return pairingResponseReceived(features)
        case (_, .pairingKeypressNotification):
            // Informative only; allowed while a passkey is being typed.
            if case .passkeyEntry = context.method, isPairing { return [] }
            return outOfState(pdu)
        default:
            break
        }
        switch step {
        case .legacyAwaitingConfirm, .legacyAwaitingRandom: return legacyReceived(pdu)
        case .awaitingPublicKey, .secureAwaitingConfirm, .secureAwaitingRandom, .awaitingDHKeyCheck: return secureReceived(pdu)
        case .distributingKeys: return keyReceived(pdu)
        default: return outOfState(pdu)
        }
    }

    // MARK: Feature exchange

    private mutating func pairingRequestReceived(_ request: PairingFeatures, bytes: [UInt8]) -> [PairingAction] {
        beginAttempt()
        step = .awaitingPairingResponse  // counts as pairing for failure reporting
        guard configuration.pairable else { return fail(.pairingNotSupported, "pairing is switched off") }
        if repeatedAttemptsBlocked { return fail(.repeatedAttempts, "the peer tries again too soon after a failed pairing") }
        do {
            try configuration.validate()
        } catch {
            return fail(.unspecifiedReason, "\(error)")
        }
        let bonding = configuration.bonding && request.authenticationRequirements.wantsBonding
        var requirements = configuration.authenticationRequirements
        if !bonding { requirements.remove(.bonding) }
        let response = PairingFeatures(
            ioCapability: configuration.ioCapability, oobDataPresent: configuration.peerOOBData != nil,
            authenticationRequirements: requirements, maximumEncryptionKeySize: 16,
            initiatorKeyDistribution: bonding ? request.initiatorKeyDistribution.intersection(configuration.keysWeRequest) : [],
            responderKeyDistribution: bonding ? request.responderKeyDistribution.intersection(configuration.keysWeDistribute) : [])
        if let refusal = negotiate(request: request, response: response) { return refusal }
        var actions: [PairingAction] = [.send(.pairingResponse(response))]
        actions += beginAuthentication()
        return actions
    }

    private mutating func pairingResponseReceived(_ response: PairingFeatures) -> [PairingAction] {
        guard let request = context.request else { return outOfState(.pairingResponse(response)) }
        guard response.initiatorKeyDistribution.isSubset(of: request.initiatorKeyDistribution),
              response.responderKeyDistribution.isSubset(of: request.responderKeyDistribution) else {
            return fail(.invalidParameters, "the response distributes keys the request did not offer")
        }
        if let refusal = negotiate(request: request, response: response) { return refusal }
        return beginAuthentication()
    }

    /// Checks both feature sets and fixes SC, key size, method and bonding; returns the
    /// refusal when the pairing cannot go on.
    private mutating func negotiate(request: PairingFeatures, response: PairingFeatures) -> [PairingAction]? {
        let peer = role == .initiator ? response : request
        guard peer.ioCapability.isDefined else {
            return fail(.invalidParameters, "the peer's IO capability 0x\(String(peer.ioCapability.rawValue, radix: 16)) is reserved")
        }
        let peerSize = Int(peer.maximumEncryptionKeySize)
        guard peerSize != 0, peerSize <= 16 else {
            return fail(.invalidParameters, "the peer's maximum key size \(peerSize) is not a key size")
        }
        let keySize = min(peerSize, 16)
        guard keySize >= configuration.effectiveMinimumKeySize else {
            return fail(.encryptionKeySize, "the peer offers \(keySize)-octet keys, below our minimum of \(configuration.effectiveMinimumKeySize)")
        }
        let secure = request.authenticationRequirements.contains(.secureConnections)
            && response.authenticationRequirements.contains(.secureConnections) && configuration.secureConnections
        if configuration.secureConnectionsOnly && !secure {
            return fail(.authenticationRequirements, "Secure Connections Only mode refuses legacy pairing")
        }
        let method = PairingMethod.select(initiator: request, responder: response, secureConnections: secure)
        if configuration.requireMITM && !method.isAuthenticated {
            return fail(.authenticationRequirements, "MITM protection is required but the IO capabilities only allow Just Works")
        }
        if configuration.refusesWeakerRepairing, let stored = storedBondStrength,
           let shortfall = stored.shortfall(of: KeyStrength(authenticated: method.isAuthenticated, secureConnections: secure, keySize: keySize)) {
            return fail(.authenticationRequirements, "the peer is bonded and this pairing would replace its keys with weaker ones (\(shortfall)); the bond is kept. Pair with a method at least as strong, or remove the bond first to pair this way")
        }
        if method == .outOfBand {
            switch (secure, configuration.peerOOBData) {
            case (false, .legacy?): break
            case (false, _): return fail(.oobNotAvailable, "legacy OOB pairing needs a TK received out of band")
            case (true, _):
                // Our flag set means we hold the peer's data; the peer's set means it holds
                // ours, which only exists if we made it.
                let peerHasOurs = role == .initiator ? response.oobDataPresent : request.oobDataPresent
                if peerHasOurs && localOOBRandom == nil { return fail(.oobNotAvailable, "the peer has OOB data we never generated") }
                if let data = configuration.peerOOBData, case .legacy = data {
                    return fail(.oobNotAvailable, "Secure Connections OOB needs the peer's random and confirm, not a TK")
                }
            }
        }
        context.request = request
        context.response = response
        context.secureConnections = secure
        context.keySize = keySize
        context.method = method
        context.bonding = request.authenticationRequirements.wantsBonding && response.authenticationRequirements.wantsBonding
        return nil
    }

    /// Phase 2 begins once both feature sets are known.
    private mutating func beginAuthentication() -> [PairingAction] {
        if context.secureConnections {
            step = .awaitingPublicKey
            guard role == .initiator else { return [] }
            return [.send(.pairingPublicKey(ownKeyPair().publicKey))]
        }
        return legacyBegin()
    }

    // MARK: Failing

    /// Ends the pairing with Pairing Failed `reason`, sent to the peer.
    mutating func fail(_ reason: PairingFailedReason, _ why: String) -> [PairingAction] {
        step = .failed
        discardSecrets()
        return [.send(.pairingFailed(reason)), .failed(.refused(reason, why))]
    }

    /// Ends the pairing for a reason of ours that is no fault of the protocol (a deadline,
    /// the caller): the peer hears Unspecified Reason, the caller `error`.
    private mutating func abort(_ error: PairingError) -> [PairingAction] {
        step = .failed
        discardSecrets()
        return [.send(.pairingFailed(.unspecifiedReason)), .failed(error)]
    }

    mutating func outOfState(_ pdu: SMPPDU) -> [PairingAction] {
        fail(.unspecifiedReason, "\(pdu.code) was not expected now")
    }

    /// Nothing of a failed attempt may be used, and a new key pair is required after a
    /// failure (Core Vol 3 Part H 2.3.5.6.1).
    mutating func discardSecrets() {
        context = Context()
        keyPair = nil
        localOOBRandom = nil
    }

    // MARK: Randomness

    mutating func nextRandom() -> SMPValue128 {
        SMPValue128.random(using: &random)
    }

    /// A passkey 000000 ... 999999.
    mutating func nextPasskey() -> UInt32 {
        UInt32.random(in: 0...999_999, using: &random)
    }

    mutating func ownKeyPair() -> P256KeyPair {
        if let keyPair { return keyPair }
        while true {
            let scalar = SMPValue256(high: nextRandom().value, low: nextRandom().value)
            if let pair = try? P256KeyPair(privateKey: scalar) {
                keyPair = pair
                return pair
            }
        }
    }

    var initiatorAddress: DeviceAddress { role == .initiator ? localAddress : peerAddress }
    var responderAddress: DeviceAddress { role == .initiator ? peerAddress : localAddress }

    /// The STK or Secure Connections LTK as the controller gets it during pairing: EDIV
    /// and Rand are zero (Core Vol 3 Part H 2.4.4).
    func pairingKey(_ key: SMPValue128) -> LongTermKey {
        LongTermKey(key: key, ediv: 0, rand: 0, keySize: UInt8(context.keySize))
    }

    /// Keeps the low `keySize` octets (Core Vol 3 Part H 2.3.4: the most significant
    /// octets are masked).
    func masked(_ key: SMPValue128) -> SMPValue128 {
        guard context.keySize < 16 else { return key }
        return SMPValue128(key.value & ((UInt128(1) << (8 * context.keySize)) - 1))
    }
}
