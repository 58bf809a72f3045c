import BluetoothCore
@testable import SMP
import Testing
import TestSupport

@Suite("SMP PDUs")
struct SMPPDUTests {
    static let samples: [SMPPDU] = [
        .pairingRequest(PairingFeatures(ioCapability: .keyboardDisplay, oobDataPresent: true, authenticationRequirements: [.bonding, .mitm, .secureConnections, .ct2], maximumEncryptionKeySize: 16, initiatorKeyDistribution: [.encryptionKey, .identityKey], responderKeyDistribution: [.encryptionKey, .identityKey, .signingKey])),
        .pairingResponse(PairingFeatures(ioCapability: .noInputNoOutput, authenticationRequirements: [], maximumEncryptionKeySize: 7, initiatorKeyDistribution: [], responderKeyDistribution: [.linkKey])),
        .pairingConfirm(SMPValue128(0x0102_0304_0506_0708_090A_0B0C_0D0E_0F10)),
        .pairingRandom(SMPValue128(42)),
        .pairingFailed(.dhKeyCheckFailed),
        .pairingFailed(PairingFailedReason(rawValue: 0x77)),
        .encryptionInformation(longTermKey: SMPValue128(7)),
        .centralIdentification(encryptedDiversifier: 0xBEEF, randomNumber: 0x0123_4567_89AB_CDEF),
        .identityInformation(identityResolvingKey: SMPValue128(8)),
        .identityAddressInformation(DeviceAddress(BluetoothAddress(0xC44B_4D00_0001), type: .random)),
        .identityAddressInformation(DeviceAddress(BluetoothAddress(0xF00D_0000_0001), type: .public)),
        .signingInformation(signatureKey: SMPValue128(9)),
        .securityRequest([.bonding, .mitm]),
        .pairingPublicKey(P256PublicKey.debug),
        .pairingDHKeyCheck(SMPValue128(10)),
        .pairingKeypressNotification(.passkeyDigitEntered),
    ]

    @Test("every PDU round-trips and has its specified length", arguments: samples)
    func roundTrip(pdu: SMPPDU) throws {
        let bytes = pdu.encode()
        #expect(bytes.count == pdu.code.pduLength)
        #expect(try SMPPDU(decoding: bytes) == pdu)
        // Truncated and oversized versions are refused, never trapped on.
        for cut in 0..<bytes.count { #expect(throws: SMPDecodeError.self) { try SMPPDU(decoding: Array(bytes[0..<cut])) } }
        #expect(throws: SMPDecodeError.self) { try SMPPDU(decoding: bytes + [0]) }
    }

    @Test("known bytes: the specification's c1 sample request and response, and little-endian values")
    func knownBytes() throws {
        // preq = 07071000000101 and pres = 05000800000302 of the c1 sample (vectors.md), as sent.
        let request = try SMPPDU(decoding: [0x01, 0x01, 0x00, 0x00, 0x10, 0x07, 0x07])
        guard case let .pairingRequest(features) = request else { Issue.record("not a request"); return }
        #expect(features.ioCapability == .displayYesNo && features.maximumEncryptionKeySize == 16)
        #expect(features.initiatorKeyDistribution == [.encryptionKey, .identityKey, .signingKey])
        let response = try SMPPDU(decoding: [0x02, 0x03, 0x00, 0x00, 0x08, 0x00, 0x05])
        guard case let .pairingResponse(answer) = response else { Issue.record("not a response"); return }
        #expect(answer.ioCapability == .noInputNoOutput && answer.maximumEncryptionKeySize == 8)
        #expect(answer.responderKeyDistribution == [.encryptionKey, .signingKey])
        #expect(SMPPDU.pairingConfirm(SMPValue128(0x0102)).encode() == [0x03, 0x02, 0x01] + [UInt8](repeating: 0, count: 14))
        #expect(SMPPDU.centralIdentification(encryptedDiversifier: 0x1234, randomNumber: 1).encode() == [0x07, 0x34, 0x12, 1, 0, 0, 0, 0, 0, 0, 0])
        #expect(SMPPDU.pairingFailed(.confirmValueFailed).encode() == [0x05, 0x04])
        #expect(SMPPDU.identityAddressInformation(DeviceAddress(BluetoothAddress(0xC44B_4D00_0001), type: .random)).encode() == [0x09, 0x01, 0x01, 0x00, 0x00, 0x4D, 0x4B, 0xC4])
    }

    @Test("reserved values: unknown codes, OOB flag and identity address type")
    func reserved() {
        #expect(throws: SMPDecodeError.unknownCode(SMPCode(rawValue: 0x0F))) { try SMPPDU(decoding: [0x0F, 0x00]) }
        #expect(throws: SMPDecodeError.empty) { try SMPPDU(decoding: []) }
        #expect((try? SMPPDU(decoding: [0x01, 0x03, 0x02, 0x00, 0x10, 0x00, 0x00])) == nil)
        #expect((try? SMPPDU(decoding: [0x09, 0x02, 1, 2, 3, 4, 5, 6])) == nil)
        #expect(SMPDecodeError.unknownCode(SMPCode(rawValue: 0x20)).pairingFailedReason == .commandNotSupported)
        #expect(SMPDecodeError.empty.pairingFailedReason == .invalidParameters)
        #expect(PairingFailedReason.busy.description == "Busy" && !PairingFailedReason(rawValue: 0x11).isDefined)
    }

    @Test("garbage never traps the decoder")
    func fuzz() async {
        var random = SeededRandom(seed: 0xD0D0)
        for iteration in 0..<20_000 {
            await yieldPeriodically(iteration: iteration)
            let bytes = random.bytes(lengths: 0...80)
            if let pdu = try? SMPPDU(decoding: bytes) {
                #expect(pdu.encode().count == bytes.count)
            }
        }
    }

    @Test("method selection: OOB and MITM rules before the IO table")
    func methodRules() {
        let noMITM = PairingFeatures(ioCapability: .keyboardDisplay, authenticationRequirements: [], initiatorKeyDistribution: [], responderKeyDistribution: [])
        var oob = noMITM
        oob.oobDataPresent = true
        #expect(PairingMethod.select(initiator: noMITM, responder: noMITM, secureConnections: true) == .justWorks)
        // SC: one OOB flag suffices; legacy needs both.
        #expect(PairingMethod.select(initiator: oob, responder: noMITM, secureConnections: true) == .outOfBand)
        #expect(PairingMethod.select(initiator: oob, responder: noMITM, secureConnections: false) == .justWorks)
        #expect(PairingMethod.select(initiator: oob, responder: oob, secureConnections: false) == .outOfBand)
        var mitm = noMITM
        mitm.authenticationRequirements = [.mitm]
        #expect(PairingMethod.select(initiator: noMITM, responder: mitm, secureConnections: true) == .numericComparison)
        #expect(PairingMethod.select(initiator: noMITM, responder: mitm, secureConnections: false) == .passkeyEntry(.initiatorDisplays))
    }
}
