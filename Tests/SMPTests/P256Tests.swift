import SMP
import Testing

@Suite struct P256Tests {
    @Test func fixedPrivateKeysGiveTheSamplePublicKeys() throws {
        #expect(try P256KeyPair(privateKey: SampleData.privateKeyA).publicKey == SampleData.publicKeyA)
        #expect(try P256KeyPair(privateKey: SampleData.privateKeyB).publicKey == SampleData.publicKeyB)
    }

    /// The sample's A is the debug key, so B must allow it; A need not.
    @Test func ecdhMatchesSpecificationSampleInBothDirections() throws {
        let a = try P256KeyPair(privateKey: SampleData.privateKeyA)
        let b = try P256KeyPair(privateKey: SampleData.privateKeyB)
        #expect(try a.dhKey(peerPublicKey: SampleData.publicKeyB) == SampleData.dhKey)
        #expect(try b.dhKey(peerPublicKey: SampleData.publicKeyA, allowingDebugKey: true) == SampleData.dhKey)
    }

    @Test func freshKeyPairsAgree() throws {
        let a = P256KeyPair()
        let b = P256KeyPair()
        #expect(a.publicKey != b.publicKey)
        #expect(try a.dhKey(peerPublicKey: b.publicKey) == b.dhKey(peerPublicKey: a.publicKey))
    }

    @Test func debugKeyIsRecognisedAndRefusedOutsideDebugMode() throws {
        let debug = try P256KeyPair(privateKey: P256KeyPair.debugPrivateKey)
        #expect(debug.isDebugKey)
        #expect(debug.publicKey == .debug)
        #expect(SampleData.publicKeyA.isDebugKey)
        #expect(!SampleData.publicKeyB.isDebugKey)
        let b = try P256KeyPair(privateKey: SampleData.privateKeyB)
        #expect(!b.isDebugKey)
        #expect(throws: P256KeyError.debugKeyNotAllowed) { try b.dhKey(peerPublicKey: .debug) }
        #expect(throws: P256KeyError.debugKeyNotAllowed) { try b.validate(peerPublicKey: .debug, allowingDebugKey: false) }
        try b.validate(peerPublicKey: .debug, allowingDebugKey: true)
    }

    @Test func offCurveKeyIsRefused() throws {
        let a = P256KeyPair()
        var offCurve = SampleData.publicKeyB
        offCurve.y.low ^= 1
        #expect(throws: P256KeyError.notOnCurve) { try a.dhKey(peerPublicKey: offCurve) }
        // (1, 1) is in range but off the curve: the invalid-curve attack's kind of point.
        let small = P256PublicKey(x: SMPValue256(high: 0, low: 1), y: SMPValue256(high: 0, low: 1))
        #expect(throws: P256KeyError.notOnCurve) { try a.dhKey(peerPublicKey: small) }
    }

    @Test func ourOwnPublicKeyIsRefused() throws {
        let b = try P256KeyPair(privateKey: SampleData.privateKeyB)
        #expect(throws: P256KeyError.sameAsOwnPublicKey) { try b.dhKey(peerPublicKey: SampleData.publicKeyB) }
        // Even in debug mode, a peer echoing the debug key back is refused.
        let debug = try P256KeyPair(privateKey: P256KeyPair.debugPrivateKey)
        #expect(throws: P256KeyError.sameAsOwnPublicKey) { try debug.dhKey(peerPublicKey: .debug, allowingDebugKey: true) }
    }

    @Test func pointAtInfinityEncodingIsRefused() {
        #expect(throws: P256KeyError.pointAtInfinity) {
            try P256KeyPair().dhKey(peerPublicKey: P256PublicKey(x: .zero, y: .zero))
        }
    }

    static let prime = SampleData.v256("ffffffff 00000001 00000000 00000000 00000000 ffffffff ffffffff ffffffff")

    @Test func coordinatesNotBelowThePrimeAreRefused() {
        let a = P256KeyPair()
        let valid = SampleData.publicKeyB
        let allOnes = SMPValue256(high: .max, low: .max)
        // p + 1 names the field element 1: a decoder that reduced modulo p would accept it.
        var primePlusOne = Self.prime
        primePlusOne.low += 1
        let cases: [(P256PublicKey, P256KeyError)] = [
            (P256PublicKey(x: Self.prime, y: valid.y), .coordinateNotBelowPrime(.x)),
            (P256PublicKey(x: allOnes, y: valid.y), .coordinateNotBelowPrime(.x)),
            (P256PublicKey(x: primePlusOne, y: valid.y), .coordinateNotBelowPrime(.x)),
            (P256PublicKey(x: valid.x, y: Self.prime), .coordinateNotBelowPrime(.y)),
            (P256PublicKey(x: valid.x, y: allOnes), .coordinateNotBelowPrime(.y)),
        ]
        for (key, error) in cases {
            #expect(throws: error) { try a.dhKey(peerPublicKey: key) }
        }
    }

    @Test(arguments: [SMPValue256.zero, SampleData.v256("ffffffff 00000000 ffffffff ffffffff bce6faad a7179e84 f3b9cac2 fc632551")])
    func invalidFixedPrivateKeysAreRefused(_ scalar: SMPValue256) {
        // Zero, and the group order n itself.
        #expect(throws: P256KeyError.invalidPrivateKey) { try P256KeyPair(privateKey: scalar) }
    }
}
