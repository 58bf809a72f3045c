import BluetoothCore
import HCI

// Encryption with the STK or LTK, then phase 3, key distribution (Core Vol 3 Part H
// 2.4.3, 3.6): the responder sends its keys first, then the initiator; each side's keys
// in the order EncKey, IdKey, SignKey.

extension PairingMachine {
    mutating func longTermKeyRequested(ediv: UInt16, rand: UInt64) -> [PairingAction] {
        guard role == .responder, step == .awaitingEncryption else {
            // An encryption attempt in the middle of a pairing (a skipped DHKey check, a
            // "zero LTK" attempt) is refused and ends the pairing; outside a pairing the
            // driver answers from stored bonds.
            if isPairing { return [.replyLongTermKey(nil)] + fail(.unspecifiedReason, "the central started encryption before pairing finished") }
            return [.replyLongTermKey(nil)]
        }
        // During pairing the central uses EDIV = 0 and Rand = 0 (STK and SC LTK alike).
        guard ediv == 0, rand == 0, let key = context.secureConnections ? context.longTermKey : context.shortTermKey else {
            return [.replyLongTermKey(nil)] + fail(.unspecifiedReason, "the central asked for a key pairing did not produce")
        }
        return [.replyLongTermKey(pairingKey(key))]
    }

    mutating func encryptionFailed(_ status: HCIErrorCode) -> [PairingAction] {
        guard isPairing else { return [] }
        step = .failed
        discardSecrets()
        return [.failed(.encryptionFailed(status))]
    }

    mutating func encryptionChanged(keySize: Int?) -> [PairingAction] {
        guard step == .awaitingEncryption else {
            if isPairing { return fail(.unspecifiedReason, "the link was encrypted before pairing finished") }
            return []
        }
        if let keySize, keySize < context.keySize {
            return fail(.encryptionKeySize, "the controller encrypted with \(keySize) octets, \(context.keySize) were negotiated")
        }
        context.keySizeChecked = keySize != nil
        var keys = PairingKeys(
            peer: peerAddress, bonded: context.bonding, secureConnections: context.secureConnections,
            authenticated: context.method.isAuthenticated, keySize: context.keySize, method: context.method)
        if context.secureConnections, let ltk = context.longTermKey { keys.longTermKey = pairingKey(ltk) }
        context.keys = keys
        context.expectedFromPeer = expectedCodes(peerDistribution)
        step = .distributingKeys
        var actions: [PairingAction] = []
        // The responder distributes first; the initiator once the responder's keys are in.
        if role == .responder { actions += sendOwnKeys() }
        actions += finishIfDone()
        return actions
    }

    mutating func encryptionKeySizeRead(_ size: Int?) -> [PairingAction] {
        guard step == .distributingKeys, !context.keySizeChecked else { return [] }
        if let size, size < context.keySize {
            return fail(.encryptionKeySize, "the controller encrypted with \(size) octets, \(context.keySize) were negotiated")
        }
        context.keySizeChecked = true
        return finishIfDone()
    }

    mutating func encryptionKeySizeUnreadable(_ status: HCIErrorCode) -> [PairingAction] {
        guard step == .distributingKeys, !context.keySizeChecked else { return [] }
        return fail(.encryptionKeySize, "the controller could not tell the key size (\(status)), so it cannot be checked against the \(context.keySize) octets negotiated")
    }

    private var peerDistribution: KeyDistribution {
        guard let response = context.response else { return [] }
        return role == .initiator ? response.responderKeyDistribution : response.initiatorKeyDistribution
    }

    private var ownDistribution: KeyDistribution {
        guard let response = context.response else { return [] }
        return role == .initiator ? response.initiatorKeyDistribution : response.responderKeyDistribution
    }

    private func expectedCodes(_ keys: KeyDistribution) -> [SMPCode] {
        var codes: [SMPCode] = []
        if keys.contains(.encryptionKey), !context.secureConnections { codes += [.encryptionInformation, .centralIdentification] }
        if keys.contains(.identityKey) { codes += [.identityInformation, .identityAddressInformation] }
        if keys.contains(.signingKey) { codes.append(.signingInformation) }
        return codes
    }

    private mutating func sendOwnKeys() -> [PairingAction] {
        guard var keys = context.keys else { return [] }
        var actions: [PairingAction] = []
        let distribution = ownDistribution
        if distribution.contains(.encryptionKey), !context.secureConnections {
            var ltk: SMPValue128
            repeat { ltk = masked(nextRandom()) } while ltk == .zero
            let key = LongTermKey(key: ltk, ediv: UInt16.random(in: 0...UInt16.max, using: &random), rand: random.next(), keySize: UInt8(context.keySize))
            keys.localLongTermKey = key
            actions += [.send(.encryptionInformation(longTermKey: ltk)),
                        .send(.centralIdentification(encryptedDiversifier: key.ediv, randomNumber: key.rand))]
        }
        if distribution.contains(.identityKey), let identity = configuration.localIdentity {
            keys.localIdentity = identity
            actions += [.send(.identityInformation(identityResolvingKey: identity.identityResolvingKey)),
                        .send(.identityAddressInformation(identity.address))]
        }
        if distribution.contains(.signingKey), let csrk = configuration.localSigningKey {
            keys.localSigningKey = csrk
            actions.append(.send(.signingInformation(signatureKey: csrk)))
        }
        context.keys = keys
        context.sentOwnKeys = true
        return actions
    }

    mutating func keyReceived(_ pdu: SMPPDU) -> [PairingAction] {
        // The initiator's keys may only come after the responder's.
        guard let expected = context.expectedFromPeer.first, expected == pdu.code,
              role == .initiator || context.sentOwnKeys else { return outOfState(pdu) }
        context.expectedFromPeer.removeFirst()
        switch pdu {
        case let .encryptionInformation(ltk):
            guard ltk != .zero else { return fail(.invalidParameters, "the peer distributed an all-zero LTK") }
            context.pendingPeerLongTermKey = ltk
        case let .centralIdentification(ediv, rand):
            guard let ltk = context.pendingPeerLongTermKey else { return outOfState(pdu) }
            context.keys?.peerLongTermKey = LongTermKey(key: ltk, ediv: ediv, rand: rand, keySize: UInt8(context.keySize))
        case let .identityInformation(irk):
            context.pendingPeerIRK = irk
        case let .identityAddressInformation(address):
            guard let irk = context.pendingPeerIRK else { return outOfState(pdu) }
            if address.type.isRandom, address.address.mostSignificantByte & 0xC0 != 0xC0 {
                return fail(.invalidParameters, "identity address \(address) is random but not static")
            }
            // Kept only when it can name this peer: not the all-zero address, and the
            // address the peer is connected from when that is an identity address itself
            // (else its bond would be kept where it is never found, or would take the place
            // of the device it names). Ignored with its IRK; the pairing goes on.
            let sameAddress = address.address == peerAddress.address && address.type.isRandom == peerAddress.type.isRandom
            if address.address.value != 0, !peerAddress.isIdentity || sameAddress {
                context.keys?.peerIdentity = IdentityKey(identityResolvingKey: irk, address: address)
            }
        case let .signingInformation(csrk):
            context.keys?.peerSigningKey = csrk
        default:
            return outOfState(pdu)
        }
        var actions: [PairingAction] = []
        if role == .initiator, context.expectedFromPeer.isEmpty, !context.sentOwnKeys { actions += sendOwnKeys() }
        return actions + finishIfDone()
    }

    private mutating func finishIfDone() -> [PairingAction] {
        if role == .initiator, context.expectedFromPeer.isEmpty, !context.sentOwnKeys {
            return sendOwnKeys() + finishIfDone()
        }
        guard context.expectedFromPeer.isEmpty, context.sentOwnKeys, context.keySizeChecked, let keys = context.keys else { return [] }
        step = .complete
        // The key pair is not kept: the next pairing gets a fresh one.
        keyPair = nil
        localOOBRandom = nil
        return [.completed(keys)]
    }
}
