import BluetoothCore
import SMP

/// Who we are to bonded peers (Core Vol 3 Part H 2.4.2.1, Vol 6 Part B 1.3): the identity
/// address we distribute in Identity Address Information and the IRK with which our
/// resolvable private addresses resolve. Generated once, then read from the bond file, so
/// a peer that bonded with us yesterday still recognises our RPAs today.
public struct LocalIdentity: Sendable, Hashable {
    /// The controller's public address, or a random static address (type `.random`).
    public var address: DeviceAddress
    public var identityResolvingKey: SMPValue128

    /// Throws ``BondStoreError/invalidIdentity(_:)`` unless `address` is public or random
    /// static.
    public init(address: DeviceAddress, identityResolvingKey: SMPValue128) throws(BondStoreError) {
        guard address.type == .public || (address.type == .random && address.address.isValidRandomStatic) else {
            throw .invalidIdentity(address)
        }
        self.address = address
        self.identityResolvingKey = identityResolvingKey
    }

    /// A fresh identity: `address` when given (normally the controller's public address),
    /// else a new random static address; always a new IRK.
    public static func generate<Generator: RandomNumberGenerator>(
        address: DeviceAddress?, using generator: inout Generator
    ) throws(BondStoreError) -> LocalIdentity {
        let chosen = address ?? DeviceAddress(.randomStatic(using: &generator), type: .random)
        return try LocalIdentity(address: chosen, identityResolvingKey: .random(using: &generator))
    }

    /// A fresh identity from the system's generator. Not by way of the generic form above:
    /// given `SystemRandomNumberGenerator` (which has no storage) an unspecialised generic
    /// call gets one placeholder address for every caller's generator, and ThreadSanitizer
    /// reported two bond stores opened on two threads as a race there.
    public static func generate(address: DeviceAddress?) throws(BondStoreError) -> LocalIdentity {
        try LocalIdentity(address: address ?? DeviceAddress(.randomStatic(), type: .random), identityResolvingKey: .random())
    }

    /// A fresh resolvable private address of ours.
    public func resolvablePrivateAddress<Generator: RandomNumberGenerator>(using generator: inout Generator) -> BluetoothAddress {
        .resolvablePrivate(irk: identityResolvingKey, using: &generator)
    }
}
