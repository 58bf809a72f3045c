import BluetoothCore

/// What we offer and demand when pairing. The defaults are the safe ones: Secure
/// Connections offered, 16-octet keys required, bonding.
public struct PairingConfiguration: Sendable {
    public var ioCapability: IOCapability
    /// Ask to bond (store keys) and distribute / request keys.
    public var bonding: Bool
    /// Ask for protection against a man in the middle (the AuthReq MITM bit): the IO
    /// capability table then picks the method.
    public var mitm: Bool
    /// Refuse a pairing whose method gives no MITM protection (Just Works) with
    /// Authentication Requirements.
    public var requireMITM: Bool
    /// Offer LE Secure Connections.
    public var secureConnections: Bool
    /// Secure Connections Only mode: legacy pairing is refused (Authentication
    /// Requirements) and keys must be 16 octets.
    public var secureConnectionsOnly: Bool
    /// The smallest encryption key size accepted, 7 ... 16 (default 16).
    public var minimumKeySize: Int
    /// Our IRK and identity address, distributed when bonding (nil: not distributed).
    public var localIdentity: IdentityKey?
    /// Our CSRK, distributed when bonding (nil: not distributed).
    public var localSigningKey: SMPValue128?
    /// Accept a peer using the specification's debug P-256 key.
    public var allowDebugKeys: Bool
    /// Accept pairing at all; false answers every attempt with Pairing Not Supported.
    public var pairable: Bool
    /// OOB data received from the peer out of band, if any.
    public var peerOOBData: OOBData?
    /// Refuse (Authentication Requirements) a pairing with a bonded peer that would make
    /// weaker keys than its bond holds: unauthenticated over authenticated, legacy over
    /// Secure Connections, or a shorter key (``KeyStrength``). The bond is kept; removing
    /// it lets the peer pair that way. A pairing at least as strong replaces the bond (a
    /// phone that forgot us pairs again). False: any pairing replaces the bond.
    public var refusesWeakerRepairing: Bool

    public init(
        ioCapability: IOCapability = .noInputNoOutput, bonding: Bool = true, mitm: Bool = false, requireMITM: Bool = false,
        secureConnections: Bool = true, secureConnectionsOnly: Bool = false, minimumKeySize: Int = 16,
        localIdentity: IdentityKey? = nil, localSigningKey: SMPValue128? = nil, allowDebugKeys: Bool = false,
        pairable: Bool = true, peerOOBData: OOBData? = nil, refusesWeakerRepairing: Bool = true
    ) {
        self.ioCapability = ioCapability
        self.bonding = bonding
        self.mitm = mitm
        self.requireMITM = requireMITM
        self.secureConnections = secureConnections
        self.secureConnectionsOnly = secureConnectionsOnly
        self.minimumKeySize = minimumKeySize
        self.localIdentity = localIdentity
        self.localSigningKey = localSigningKey
        self.allowDebugKeys = allowDebugKeys
        self.pairable = pairable
        self.peerOOBData = peerOOBData
        self.refusesWeakerRepairing = refusesWeakerRepairing
    }

    /// The range a key size field may take (Core Vol 3 Part H 2.3.4).
    public static let keySizeRange: ClosedRange<Int> = 7...16

    /// Throws when the configuration cannot be used: a minimum key size outside 7 ... 16,
    /// a reserved IO capability, or SC Only without SC or with a minimum below 16.
    public func validate() throws(PairingError) {
        guard Self.keySizeRange.contains(minimumKeySize) else {
            throw .invalidConfiguration("minimum key size \(minimumKeySize) is outside 7 ... 16 octets")
        }
        guard ioCapability.isDefined else { throw .invalidConfiguration("\(ioCapability) is not an IO capability") }
        if secureConnectionsOnly {
            guard secureConnections else { throw .invalidConfiguration("Secure Connections Only mode needs Secure Connections enabled") }
        }
        if let identity = localIdentity, identity.address.type.isRandom, identity.address.address.mostSignificantByte & 0xC0 != 0xC0 {
            throw .invalidConfiguration("identity address \(identity.address) is random but not static")
        }
    }

    /// Whether a stored bond's key may encrypt a link under this configuration: in Secure
    /// Connections Only mode not a key legacy pairing made, which is what the mode refuses
    /// (a new pairing replaces that bond).
    public func admits(_ bond: Bond) -> Bool { !secureConnectionsOnly || bond.secureConnections }

    /// The minimum in effect: 16 in Secure Connections Only mode.
    var effectiveMinimumKeySize: Int { secureConnectionsOnly ? 16 : minimumKeySize }

    var authenticationRequirements: AuthenticationRequirements {
        var requirements: AuthenticationRequirements = []
        if bonding { requirements.insert(.bonding) }
        if mitm || requireMITM { requirements.insert(.mitm) }
        if secureConnections { requirements.formUnion([.secureConnections, .ct2]) }
        return requirements
    }

    /// Keys we would send as `initiator` or responder when bonding.
    var keysWeDistribute: KeyDistribution {
        guard bonding else { return [] }
        var keys: KeyDistribution = [.encryptionKey]
        if localIdentity != nil { keys.insert(.identityKey) }
        if localSigningKey != nil { keys.insert(.signingKey) }
        return keys
    }

    /// Keys we ask the peer for when bonding.
    var keysWeRequest: KeyDistribution {
        bonding ? [.encryptionKey, .identityKey, .signingKey] : []
    }
}
