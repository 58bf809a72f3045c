import ATT
import BluetoothCore
import BluetoothCrypto
import Bonding
import SMP

/// Checks Signed Write Commands against the sender's bond (Core 5.4 Vol 3 Part C 10.4.2):
/// the signature must be the one the CSRK the peer distributed gives (BluetoothCrypto's
/// ``DataSigning``), and its SignCounter must not be one already used. The bond keeps the
/// lowest counter still accepted, saved before the write is performed, so a replayed
/// command is refused across restarts too.
///
/// Refused, and counted by the ATT server as ``ATTServer/Statistics/signedWritesRejected``
/// with the reason logged: a sender with no bond or no CSRK; an all-zero CSRK (every forger
/// knows it; Bumble 0.0.236 distributes one); a counter below the stored one, or the last
/// counter there is (the key is used up: pair again); a signature that does not verify; a
/// counter the bond store could not save.
///
/// A verified write is checked against the attribute's permissions with the protection of
/// the pairing that made the key, as if the link were encrypted with it.
struct SignedWriteVerifier: Sendable {
    let bonds: BondStore
    private static let counterUsed = "SignCounter already used (replayed or reordered), or the key is used up"

    var verifier: ATTSignatureVerifier {
        { command, context in verify(command, from: context.peer) }
    }

    func verify(_ command: SignedWriteCommand, from peer: DeviceAddress?) -> ATTLinkSecurity? {
        let signature = command.authenticationSignature
        guard let peer, let bond = bonds.bond(for: peer) else { return refuse("the sender has no bond", peer) }
        guard let key = bond.peerKeys.signatureKey else { return refuse("the sender's bond holds no CSRK", peer) }
        guard key.key != .zero else { return refuse("the sender's CSRK is all zeros, which anyone can sign with", peer) }
        guard let counter = DataSigning.counter(of: signature), counter >= key.signCounter, counter != .max else {
            return refuse(Self.counterUsed, peer)
        }
        guard DataSigning.verify(signature, key: key.key.value, data: command.signedBytes) else {
            return refuse("the signature does not verify with the sender's CSRK", peer)
        }
        var fresh = false
        do {
            try bonds.update { stored in
                guard let index = stored.firstIndex(where: { $0.peer == bond.peer }),
                      var current = stored[index].peerKeys.signatureKey, current.key == key.key,
                      counter >= current.signCounter else { return }
                current.signCounter = counter + 1
                stored[index].peerKeys.signatureKey = current
                fresh = true
            }
        } catch {
            return refuse("its SignCounter could not be saved (\(error)), so a replay could not be told", peer)
        }
        // Another write with this counter won the race to the file.
        guard fresh else { return refuse(Self.counterUsed, peer) }
        return ATTLinkSecurity(
            isEncrypted: true, isAuthenticated: bond.authenticated, isSecureConnections: bond.secureConnections,
            keySize: bond.peerKeys.longTermKey?.keySize ?? bond.localKeys.longTermKey?.keySize ?? 16,
            hasLongTermKey: bond.peerKeys.longTermKey != nil || bond.localKeys.longTermKey != nil)
    }

    private func refuse(_ reason: String, _ peer: DeviceAddress?) -> ATTLinkSecurity? {
        HostLog.logger.warning("Signed Write Command refused: \(reason)", metadata: ["peer": "\(peer.map { "\($0)" } ?? "unknown")"])
        return nil
    }
}
