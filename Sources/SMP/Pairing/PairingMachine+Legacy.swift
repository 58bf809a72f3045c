import BluetoothCore

// LE legacy pairing phase 2 (Core Vol 3 Part H 2.3.5.2 - 2.3.5.5): TK from the method,
// Mconfirm/Sconfirm with c1, Mrand/Srand, STK = s1(TK, Srand, Mrand).

extension PairingMachine {
    mutating func legacyBegin() -> [PairingAction] {
        step = .legacyAwaitingConfirm
        var actions: [PairingAction] = []
        switch context.method {
        case .justWorks, .numericComparison:
            context.temporaryKey = .zero
        case .outOfBand:
            guard case let .legacy(tk)? = configuration.peerOOBData else {
                return fail(.oobNotAvailable, "no TK received out of band")
            }
            context.temporaryKey = tk
        case let .passkeyEntry(roles):
            actions += passkeyBegin(roles)
        }
        if role == .initiator, context.temporaryKey != nil { actions += legacySendConfirm() }
        return actions
    }

    /// Displays a fresh passkey or asks the user for one, by the table's roles. Shared by
    /// legacy and Secure Connections.
    mutating func passkeyBegin(_ roles: PairingMethod.PasskeyRoles) -> [PairingAction] {
        let weDisplay = switch roles {
        case .initiatorDisplays: role == .initiator
        case .responderDisplays: role == .responder
        case .bothInput: false
        }
        if weDisplay {
            let passkey = nextPasskey()
            context.passkey = passkey
            context.temporaryKey = SMPValue128(UInt128(passkey))
            return [.displayPasskey(passkey)]
        }
        context.waitingForUser = true
        return [.requestPasskey]
    }

    mutating func passkeyEntered(_ passkey: UInt32?) -> [PairingAction] {
        guard isPairing, context.waitingForUser, case .passkeyEntry = context.method else { return [] }
        context.waitingForUser = false
        guard let passkey else { return fail(.passkeyEntryFailed, "the user cancelled the passkey entry") }
        guard passkey <= 999_999 else { return fail(.passkeyEntryFailed, "a passkey has six digits, \(passkey) has more") }
        context.passkey = passkey
        context.temporaryKey = SMPValue128(UInt128(passkey))
        if context.secureConnections { return securePasskeyKnown() }
        switch role {
        case .initiator:
            return legacySendConfirm()
        case .responder:
            // Mconfirm may already be here, waiting for the TK.
            return context.peerConfirm == nil ? [] : legacySendConfirm()
        }
    }

    private mutating func legacyConfirm(random: SMPValue128) -> SMPValue128? {
        guard let tk = context.temporaryKey, let request = context.request, let response = context.response else { return nil }
        return try? CryptoToolbox.c1(
            k: tk, r: random, pairingRequest: SMPPDU.pairingRequest(request).encode(),
            pairingResponse: SMPPDU.pairingResponse(response).encode(),
            initiator: initiatorAddress, responder: responderAddress)
    }

    /// Mconfirm (initiator, once the TK is known) or Sconfirm (responder, once Mconfirm
    /// came and the TK is known).
    private mutating func legacySendConfirm() -> [PairingAction] {
        let random = nextRandom()
        context.localRandom = random
        guard let confirm = legacyConfirm(random: random) else { return fail(.unspecifiedReason, "no TK for the confirm value") }
        if role == .responder { step = .legacyAwaitingRandom }
        return [.send(.pairingConfirm(confirm))]
    }

    mutating func legacyReceived(_ pdu: SMPPDU) -> [PairingAction] {
        switch (role, step, pdu) {
        case let (.initiator, .legacyAwaitingConfirm, .pairingConfirm(confirm)):
            guard context.localRandom != nil, let random = context.localRandom else { return outOfState(pdu) }
            context.peerConfirm = confirm
            step = .legacyAwaitingRandom
            return [.send(.pairingRandom(random))]
        case let (.responder, .legacyAwaitingConfirm, .pairingConfirm(confirm)):
            guard context.peerConfirm == nil else { return outOfState(pdu) }
            context.peerConfirm = confirm
            return context.temporaryKey == nil ? [] : legacySendConfirm()
        case let (.initiator, .legacyAwaitingRandom, .pairingRandom(srand)):
            // A peer that echoes our Mconfirm and then our Mrand passes c1 without knowing
            // the TK (c1 is one-to-one in the random), and finds a passkey's 20-bit TK
            // offline from what it saw: an "authenticated" key it never had to know.
            guard srand != context.localRandom else { return fail(.confirmValueFailed, "the peer sent our own random back") }
            guard let expected = legacyConfirm(random: srand), constantTimeEqual(expected, context.peerConfirm),
                  let tk = context.temporaryKey, let mrand = context.localRandom else {
                return fail(.confirmValueFailed, "Sconfirm does not match Srand")
            }
            let stk = masked(CryptoToolbox.s1(k: tk, r1: srand, r2: mrand))
            context.shortTermKey = stk
            step = .awaitingEncryption
            return [.startEncryption(pairingKey(stk))]
        case let (.responder, .legacyAwaitingRandom, .pairingRandom(mrand)):
            guard mrand != context.localRandom else { return fail(.confirmValueFailed, "the peer sent our own random back") }
            guard let expected = legacyConfirm(random: mrand), constantTimeEqual(expected, context.peerConfirm),
                  let tk = context.temporaryKey, let srand = context.localRandom else {
                return fail(.confirmValueFailed, "Mconfirm does not match Mrand")
            }
            context.shortTermKey = masked(CryptoToolbox.s1(k: tk, r1: srand, r2: mrand))
            step = .awaitingEncryption
            return [.send(.pairingRandom(srand))]
        default:
            return outOfState(pdu)
        }
    }
}

/// Compares two 128-bit values without an early exit, so the time taken does not tell a
/// peer how many leading octets of a guessed confirm or check value were right.
func constantTimeEqual(_ a: SMPValue128, _ b: SMPValue128?) -> Bool {
    guard let b else { return false }
    let difference = a.value ^ b.value
    var folded: UInt64 = UInt64(truncatingIfNeeded: difference) | UInt64(truncatingIfNeeded: difference >> 64)
    folded |= folded >> 32
    return folded & 0xFFFF_FFFF == 0
}
