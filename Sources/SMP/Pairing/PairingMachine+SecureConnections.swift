import BluetoothCore

// LE Secure Connections phase 2 (Core Vol 3 Part H 2.3.5.6): public keys, then the
// method's commitment rounds (f4), the nonces, f5 for MacKey and LTK, and the DHKey checks
// (f6). A: initiator, B: responder.

extension PairingMachine {
    mutating func secureReceived(_ pdu: SMPPDU) -> [PairingAction] {
        switch (step, pdu) {
        case let (.awaitingPublicKey, .pairingPublicKey(key)):
            return publicKeyReceived(key)
        case let (.secureAwaitingConfirm, .pairingConfirm(confirm)):
            return secureConfirmReceived(confirm)
        case let (.secureAwaitingRandom, .pairingRandom(nonce)):
            return secureRandomReceived(nonce)
        case let (.awaitingDHKeyCheck, .pairingDHKeyCheck(check)):
            return dhKeyCheckReceived(check)
        default:
            return outOfState(pdu)
        }
    }

    private mutating func publicKeyReceived(_ key: P256PublicKey) -> [PairingAction] {
        let pair = ownKeyPair()
        do {
            context.dhKey = try pair.dhKey(peerPublicKey: key, allowingDebugKey: configuration.allowDebugKeys)
        } catch {
            return fail(.invalidParameters, "the peer's public key is unusable: \(error)")
        }
        context.peerPublicKey = key
        var actions: [PairingAction] = []
        if role == .responder { actions.append(.send(.pairingPublicKey(pair.publicKey))) }
        switch context.method {
        case .justWorks, .numericComparison:
            if role == .responder {
                // B commits first: Cb = f4(PKbx, PKax, Nb, 0).
                let nb = nextRandom()
                context.responderNonce = nb
                actions.append(.send(.pairingConfirm(CryptoToolbox.f4(u: pair.publicKey.x, v: key.x, x: nb, z: 0))))
                step = .secureAwaitingRandom
            } else {
                step = .secureAwaitingConfirm
            }
        case let .passkeyEntry(roles):
            step = .secureAwaitingConfirm
            actions += passkeyBegin(roles)
            if context.passkey != nil { actions += securePasskeyKnown() }
        case .outOfBand:
            // The peer's commitment from the OOB channel must match the key it sent.
            if case let .secureConnections(r, c)? = configuration.peerOOBData {
                guard constantTimeEqual(CryptoToolbox.f4(u: key.x, v: key.x, x: r, z: 0), c) else {
                    return fail(.confirmValueFailed, "the OOB confirm value does not match the peer's public key")
                }
            }
            step = .secureAwaitingRandom
            if role == .initiator { actions += sendInitiatorNonce() }
        }
        return actions
    }

    /// Passkey Entry can start its rounds: the initiator commits to round 1; the responder
    /// answers a commitment that may already be waiting.
    mutating func securePasskeyKnown() -> [PairingAction] {
        guard step == .secureAwaitingConfirm, context.peerPublicKey != nil else { return [] }
        switch role {
        case .initiator:
            return sendPasskeyCommitment()
        case .responder:
            return context.peerConfirm == nil ? [] : sendPasskeyCommitment()
        }
    }

    private var passkeyBit: UInt8 { UInt8(((context.passkey ?? 0) >> UInt32(context.round)) & 1) | 0x80 }

    /// Cai = f4(PKax, PKbx, Nai, rai) or Cbi = f4(PKbx, PKax, Nbi, rbi).
    private mutating func sendPasskeyCommitment() -> [PairingAction] {
        guard let peerKey = context.peerPublicKey else { return outOfState(.pairingConfirm(.zero)) }
        let nonce = nextRandom()
        context.localRandom = nonce
        let confirm = CryptoToolbox.f4(u: ownKeyPair().publicKey.x, v: peerKey.x, x: nonce, z: passkeyBit)
        if role == .responder { step = .secureAwaitingRandom }
        return [.send(.pairingConfirm(confirm))]
    }

    private mutating func secureConfirmReceived(_ confirm: SMPValue128) -> [PairingAction] {
        switch (role, context.method) {
        case (.initiator, .justWorks), (.initiator, .numericComparison):
            context.peerConfirm = confirm
            step = .secureAwaitingRandom
            return sendInitiatorNonce()
        case (.initiator, .passkeyEntry):
            guard let nonce = context.localRandom else { return outOfState(.pairingConfirm(confirm)) }
            context.peerConfirm = confirm
            step = .secureAwaitingRandom
            return [.send(.pairingRandom(nonce))]
        case (.responder, .passkeyEntry):
            guard context.peerConfirm == nil else { return outOfState(.pairingConfirm(confirm)) }
            context.peerConfirm = confirm
            return context.passkey == nil ? [] : sendPasskeyCommitment()
        default:
            return outOfState(.pairingConfirm(confirm))
        }
    }

    private mutating func sendInitiatorNonce() -> [PairingAction] {
        let na = nextRandom()
        context.initiatorNonce = na
        return [.send(.pairingRandom(na))]
    }

    private mutating func secureRandomReceived(_ nonce: SMPValue128) -> [PairingAction] {
        guard let peerKey = context.peerPublicKey else { return outOfState(.pairingRandom(nonce)) }
        let ownX = ownKeyPair().publicKey.x
        switch (role, context.method) {
        case (.initiator, .justWorks), (.initiator, .numericComparison):
            // Cb = f4(PKbx, PKax, Nb, 0)
            guard constantTimeEqual(CryptoToolbox.f4(u: peerKey.x, v: ownX, x: nonce, z: 0), context.peerConfirm) else {
                return fail(.confirmValueFailed, "Cb does not match Nb")
            }
            context.responderNonce = nonce
            return afterNonces()
        case (.responder, .justWorks), (.responder, .numericComparison), (.responder, .outOfBand):
            context.initiatorNonce = nonce
            let nb = context.responderNonce ?? nextRandom()
            context.responderNonce = nb
            return [.send(.pairingRandom(nb))] + afterNonces()
        case (.initiator, .outOfBand):
            context.responderNonce = nonce
            return afterNonces()
        case (.initiator, .passkeyEntry):
            guard constantTimeEqual(CryptoToolbox.f4(u: peerKey.x, v: ownX, x: nonce, z: passkeyBit), context.peerConfirm) else {
                return fail(.confirmValueFailed, "Cb\(context.round + 1) does not match Nb\(context.round + 1): the passkeys differ")
            }
            context.initiatorNonce = context.localRandom
            context.responderNonce = nonce
            return nextPasskeyRound()
        case (.responder, .passkeyEntry):
            guard constantTimeEqual(CryptoToolbox.f4(u: peerKey.x, v: ownX, x: nonce, z: passkeyBit), context.peerConfirm),
                  let own = context.localRandom else {
                return fail(.confirmValueFailed, "Ca\(context.round + 1) does not match Na\(context.round + 1): the passkeys differ")
            }
            context.initiatorNonce = nonce
            context.responderNonce = own
            var actions: [PairingAction] = [.send(.pairingRandom(own))]
            actions += nextPasskeyRound()
            return actions
        }
    }

    /// After round 20 the last nonces are Na and Nb (Core Vol 3 Part H 2.3.5.6.3).
    private mutating func nextPasskeyRound() -> [PairingAction] {
        context.round += 1
        context.peerConfirm = nil
        context.localRandom = nil
        guard context.round == 20 else {
            step = .secureAwaitingConfirm
            return role == .initiator ? sendPasskeyCommitment() : []
        }
        return afterNonces()
    }

    /// Both nonces are known: f5, then the user's comparison or straight to the checks.
    private mutating func afterNonces() -> [PairingAction] {
        guard let dhKey = context.dhKey, let na = context.initiatorNonce, let nb = context.responderNonce,
              let peerKey = context.peerPublicKey else { return fail(.unspecifiedReason, "nonces without a DHKey") }
        let keys = CryptoToolbox.f5(w: dhKey, n1: na, n2: nb, a1: initiatorAddress, a2: responderAddress)
        context.macKey = keys.macKey
        context.longTermKey = masked(keys.longTermKey)
        step = .awaitingDHKeyCheck
        if context.method == .numericComparison {
            let (pkax, pkbx) = role == .initiator ? (ownKeyPair().publicKey.x, peerKey.x) : (peerKey.x, ownKeyPair().publicKey.x)
            let value = CryptoToolbox.numericComparisonValue(CryptoToolbox.g2(u: pkax, v: pkbx, x: na, y: nb))
            context.waitingForUser = true
            return [.confirmNumericComparison(value)]
        }
        context.userConfirmed = true
        return role == .initiator ? [.send(.pairingDHKeyCheck(initiatorCheck()))] : releaseHeldCheck()
    }

    mutating func numericComparisonConfirmed(_ accepted: Bool) -> [PairingAction] {
        guard isPairing, context.method == .numericComparison, context.waitingForUser else { return [] }
        context.waitingForUser = false
        guard accepted else { return fail(.numericComparisonFailed, "the user said the numbers differ") }
        context.userConfirmed = true
        return role == .initiator ? [.send(.pairingDHKeyCheck(initiatorCheck()))] : releaseHeldCheck()
    }

    /// r of f6 for Ea and Eb: the passkey, the OOB randoms each side received, or zero.
    private mutating func checkRandoms() -> (forInitiator: SMPValue128, forResponder: SMPValue128) {
        switch context.method {
        case .passkeyEntry:
            let r = SMPValue128(UInt128(context.passkey ?? 0))
            return (r, r)
        case .outOfBand:
            var peerRandom = SMPValue128.zero
            if case let .secureConnections(r, _)? = configuration.peerOOBData { peerRandom = r }
            let own = localOOBRandom ?? .zero
            let initiatorHasResponders = context.request?.oobDataPresent == true
            let responderHasInitiators = context.response?.oobDataPresent == true
            // Ea uses rb (B's random as A received it), Eb uses ra.
            if role == .initiator {
                return (initiatorHasResponders ? peerRandom : .zero, responderHasInitiators ? own : .zero)
            }
            return (initiatorHasResponders ? own : .zero, responderHasInitiators ? peerRandom : .zero)
        default:
            return (.zero, .zero)
        }
    }

    /// Ea = f6(MacKey, Na, Nb, rb, IOcapA, A, B).
    private mutating func initiatorCheck() -> SMPValue128 { dhKeyCheck(ofInitiator: true) }

    /// Eb = f6(MacKey, Nb, Na, ra, IOcapB, B, A).
    private mutating func responderCheck() -> SMPValue128 { dhKeyCheck(ofInitiator: false) }

    /// f6 from the named device's point of view: its nonce, address and IOcap first.
    private mutating func dhKeyCheck(ofInitiator: Bool) -> SMPValue128 {
        let randoms = checkRandoms()
        let (na, nb) = (context.initiatorNonce ?? .zero, context.responderNonce ?? .zero)
        let features = ofInitiator ? context.request : context.response
        return CryptoToolbox.f6(
            w: context.macKey ?? .zero, n1: ofInitiator ? na : nb, n2: ofInitiator ? nb : na,
            r: ofInitiator ? randoms.forInitiator : randoms.forResponder,
            ioCap: features?.ioCap ?? IOCap(authenticationRequirements: 0, oobDataFlag: 0, ioCapability: 0),
            a1: ofInitiator ? initiatorAddress : responderAddress, a2: ofInitiator ? responderAddress : initiatorAddress)
    }

    private mutating func dhKeyCheckReceived(_ check: SMPValue128) -> [PairingAction] {
        switch role {
        case .initiator:
            // Eb can only come after our Ea, which follows the user's confirmation.
            guard context.userConfirmed else { return outOfState(.pairingDHKeyCheck(check)) }
            guard constantTimeEqual(responderCheck(), check), let ltk = context.longTermKey else {
                return fail(.dhKeyCheckFailed, "Eb does not match")
            }
            step = .awaitingEncryption
            return [.startEncryption(pairingKey(ltk))]
        case .responder:
            guard context.heldDHKeyCheck == nil else { return outOfState(.pairingDHKeyCheck(check)) }
            context.heldDHKeyCheck = check
            return context.userConfirmed ? releaseHeldCheck() : []
        }
    }

    /// The responder answers Ea only once its own user confirmed (Numeric Comparison).
    private mutating func releaseHeldCheck() -> [PairingAction] {
        guard let check = context.heldDHKeyCheck else { return [] }
        guard constantTimeEqual(initiatorCheck(), check) else { return fail(.dhKeyCheckFailed, "Ea does not match") }
        step = .awaitingEncryption
        return [.send(.pairingDHKeyCheck(responderCheck()))]
    }
}
