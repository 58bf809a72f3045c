import BluetoothCore
import SMP

/// What one bond file holds: the local identity it belongs to and its bonds.
public struct StoredBonds: Sendable, Hashable {
    public var local: LocalIdentity
    /// In identity address order, one per peer identity.
    public var bonds: [Bond]

    /// Keeps the last of `bonds` per peer, each under the type the file can hold: a
    /// controller that resolved an RPA reports the identity as 0x02/0x03, which is the same
    /// peer as public/random, and two entries for one address would make the file
    /// unreadable (every bond with it).
    public init(local: LocalIdentity, bonds: [Bond] = []) {
        self.local = local
        var latest: [DeviceAddress: Bond] = [:]
        for var bond in bonds {
            bond.peer = DeviceAddress(bond.peer.address, type: bond.peer.type.isRandom ? .random : .public)
            latest[bond.peer] = bond
        }
        self.bonds = latest.values.sorted { ($0.peer.address, $0.peer.type.rawValue) < ($1.peer.address, $1.peer.type.rawValue) }
    }
}

/// The JSON of a bond file, version 1. Keys are 32 hex digits most significant first (the
/// specification's printed order), Rand 16 hex digits (a JSON number would lose bits
/// above 2^53 in most readers), addresses "AA:BB:CC:DD:EE:FF" with a separate type.
///
/// ```
/// {"format": "bareble-bonds", "version": 1,
///  "local": {"address": "F0:0D:00:00:00:01", "type": "public", "irk": "..."},
///  "bonds": [{"peer": {"address": "C4:4B:4D:00:00:01", "type": "random"},
///             "authenticated": true, "secure_connections": true, "created": 1763788800,
///             "peer_keys": {"ltk": {"key": "...", "ediv": 0, "rand": "0000000000000000", "key_size": 16},
///                           "irk": "...", "csrk": {"key": "...", "sign_counter": 0}},
///             "local_keys": {}}]}
/// ```
public enum BondFileFormat {
    public static let formatName = "bareble-bonds"
    public static let version = 1
    /// The sizes a Long Term Key may have (Core Vol 3 Part H 3.5.1); the reader refuses
    /// others, so the store never writes them.
    static let longTermKeySizes: ClosedRange<UInt8> = 7...16

    /// Why the reader would refuse `bond`, if it would.
    static func unwritable(_ bond: Bond) -> BondStoreError? {
        for (whose, key) in [("the peer's", bond.peerKeys.longTermKey), ("our", bond.localKeys.longTermKey)] {
            if let key, !longTermKeySizes.contains(key.keySize) {
                return .invalidBond(peer: bond.peer, reason: "\(whose) Long Term Key is \(key.keySize) octets")
            }
        }
        return nil
    }

    // MARK: Encoding

    /// Keys in sorted order and indented, as the files written before (by Foundation's
    /// JSONEncoder, prettyPrinted and sortedKeys) were, so files diff well.
    public static func encode(_ stored: StoredBonds) -> [UInt8] {
        let file = JSONValue.object([
            ("bonds", .array(stored.bonds.map(entry))),
            ("format", .string(formatName)),
            ("local", .object([
                ("address", .string(stored.local.address.address.description)),
                ("irk", .string(hex(stored.local.identityResolvingKey))),
                ("type", .string(typeName(stored.local.address.type))),
            ])),
            ("version", .int(version)),
        ])
        var writer = JSONWriter(indented: true)
        file.write(to: &writer)
        writer.newline()
        return writer.bytes
    }

    static func entry(_ bond: Bond) -> JSONValue {
        .object([
            ("authenticated", .bool(bond.authenticated)),
            ("created", .int(Int(bond.createdAt))),
            ("local_keys", keys(bond.localKeys)),
            ("peer", .object([("address", .string(bond.peer.address.description)), ("type", .string(typeName(bond.peer.type)))])),
            ("peer_keys", keys(bond.peerKeys)),
            ("secure_connections", .bool(bond.secureConnections)),
        ])
    }

    static func keys(_ keys: DistributedKeys) -> JSONValue {
        var members: [(String, JSONValue)] = []
        if let csrk = keys.signatureKey {
            members.append(("csrk", .object([("key", .string(hex(csrk.key))), ("sign_counter", .int(Int(csrk.signCounter)))])))
        }
        if let irk = keys.identityResolvingKey { members.append(("irk", .string(hex(irk)))) }
        if let ltk = keys.longTermKey {
            members.append(("ltk", .object([
                ("ediv", .int(Int(ltk.ediv))), ("key", .string(hex(ltk.key))), ("key_size", .int(Int(ltk.keySize))),
                ("rand", .string(hex64(ltk.rand))),
            ])))
        }
        return .object(members)
    }

    static func hex(_ value: SMPValue128) -> String { Hex.string(value.bigEndianBytes).lowercased() }

    static func hex64(_ value: UInt64) -> String {
        Hex.string((0..<8).map { UInt8(truncatingIfNeeded: value >> (8 * (7 - $0))) }).lowercased()
    }

    static func typeName(_ type: AddressType) -> String { type.isRandom ? "random" : "public" }

    // MARK: Decoding (total: every failure is a typed error naming the field)

    /// Parses a bond file; `path` only names it in errors.
    public static func decode(_ bytes: [UInt8], path: String) throws(BondStoreError) -> StoredBonds {
        let file: JSONValue
        do {
            file = try JSONValue(parsing: String(decoding: bytes, as: UTF8.self))
        } catch {
            throw .corrupt(path: path, reason: bytes.isEmpty ? "the file is empty" : "not a JSON object (truncated or overwritten?)")
        }
        guard case .object = file else { throw .corrupt(path: path, reason: "not a JSON object (truncated or overwritten?)") }
        let format = file["format"]?.stringValue
        guard format == formatName else {
            throw .corrupt(path: path, reason: "\"format\" is \(format.map { "\"\($0)\"" } ?? "missing"), not \"\(formatName)\"")
        }
        guard let fileVersion = file["version"]?.intValue else { throw .corrupt(path: path, reason: "no \"version\"") }
        guard fileVersion == version else { throw .unsupportedVersion(path: path, version: fileVersion) }
        return try stored(file, path: path)
    }

    static func stored(_ file: JSONValue, path: String) throws(BondStoreError) -> StoredBonds {
        let field = FieldChecker(path: path)
        let localObject = try field.object(file, "local", at: "")
        let localAddress = try field.address(localObject, at: "local")
        let local: LocalIdentity
        do {
            local = try LocalIdentity(address: localAddress, identityResolvingKey: try field.key(localObject, "irk", at: "local"))
        } catch .invalidIdentity {
            throw .corrupt(path: path, reason: "local: \(localAddress) is not an identity address")
        }
        guard let entries = file["bonds"] else { throw field.fail("top level", "missing \"bonds\"") }
        guard let entries = entries.arrayValue else { throw field.fail("bonds", "wrong type") }
        var bonds: [Bond] = []
        var seen = Set<DeviceAddress>()
        for (index, entry) in entries.enumerated() {
            let at = "bonds[\(index)]"
            let peer = try field.address(try field.object(entry, "peer", at: at), at: "\(at).peer")
            guard seen.insert(peer).inserted else { throw .corrupt(path: path, reason: "\(at): \(peer) is stored twice") }
            bonds.append(Bond(
                peer: peer,
                peerKeys: try field.keys(try field.object(entry, "peer_keys", at: at), at: "\(at).peer_keys"),
                localKeys: try field.keys(try field.object(entry, "local_keys", at: at), at: "\(at).local_keys"),
                authenticated: try field.bool(entry, "authenticated", at: at),
                secureConnections: try field.bool(entry, "secure_connections", at: at),
                createdAt: try field.integer(entry, "created", at: at)))
        }
        return StoredBonds(local: local, bonds: bonds)
    }

    /// Reads the file's fields; every failure names the field ("bonds[0].peer_keys.ltk:
    /// missing \"key\"") so a person can find it.
    struct FieldChecker {
        let path: String

        func fail(_ at: String, _ what: String) -> BondStoreError { .corrupt(path: path, reason: "\(at): \(what)") }

        private func member(_ object: JSONValue, _ key: String, at: String) throws(BondStoreError) -> JSONValue {
            guard case .object = object else { throw fail(at.isEmpty ? "top level" : at, "wrong type") }
            guard let value = object[key] else { throw fail(at.isEmpty ? "top level" : at, "missing \"\(key)\"") }
            return value
        }

        private func name(_ key: String, at: String) -> String { at.isEmpty ? key : "\(at).\(key)" }

        func object(_ object: JSONValue, _ key: String, at: String) throws(BondStoreError) -> JSONValue {
            let value = try member(object, key, at: at)
            guard case .object = value else { throw fail(name(key, at: at), "wrong type") }
            return value
        }

        func string(_ object: JSONValue, _ key: String, at: String) throws(BondStoreError) -> String {
            guard let text = try member(object, key, at: at).stringValue else { throw fail(name(key, at: at), "wrong type") }
            return text
        }

        func bool(_ object: JSONValue, _ key: String, at: String) throws(BondStoreError) -> Bool {
            guard let value = try member(object, key, at: at).boolValue else { throw fail(name(key, at: at), "wrong type") }
            return value
        }

        /// A whole number that fits `T`: anything else (a fraction, out of range) is refused.
        func integer<T: FixedWidthInteger>(_ object: JSONValue, _ key: String, at: String) throws(BondStoreError) -> T {
            guard let number = try member(object, key, at: at).intValue else { throw fail(name(key, at: at), "wrong type") }
            guard let value = T(exactly: number) else { throw fail(name(key, at: at), "\(number) is out of range") }
            return value
        }

        func address(_ object: JSONValue, at: String) throws(BondStoreError) -> DeviceAddress {
            let text = try string(object, "address", at: at)
            guard let address = BluetoothAddress(text) else { throw fail(at, "\"\(text)\" is not an address") }
            switch try string(object, "type", at: at) {
            case "public": return DeviceAddress(address, type: .public)
            case "random": return DeviceAddress(address, type: .random)
            case let type: throw fail(at, "address type \"\(type)\" is neither public nor random")
            }
        }

        func key(_ object: JSONValue, _ key: String, at: String) throws(BondStoreError) -> SMPValue128 {
            let text = try string(object, key, at: at)
            guard text.count == 32, let value = SMPValue128(hex: text) else { throw fail(name(key, at: at), "not 32 hex digits") }
            return value
        }

        func keys(_ keys: JSONValue, at: String) throws(BondStoreError) -> DistributedKeys {
            var result = DistributedKeys()
            if keys["ltk"] != nil {
                let ltk = try object(keys, "ltk", at: at)
                let ltkAt = "\(at).ltk"
                let keySize: UInt8 = try integer(ltk, "key_size", at: ltkAt)
                guard longTermKeySizes.contains(keySize) else { throw fail("\(ltkAt).key_size", "\(keySize) is outside 7...16") }
                let randText = try string(ltk, "rand", at: ltkAt)
                guard randText.count == 16, let bytes = Hex.bytes(randText), bytes.count == 8 else {
                    throw fail("\(ltkAt).rand", "not 16 hex digits")
                }
                let rand = bytes.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
                result.longTermKey = LongTermKey(key: try key(ltk, "key", at: ltkAt), ediv: try integer(ltk, "ediv", at: ltkAt), rand: rand, keySize: keySize)
            }
            if keys["irk"] != nil { result.identityResolvingKey = try key(keys, "irk", at: at) }
            if keys["csrk"] != nil {
                let csrk = try object(keys, "csrk", at: at)
                result.signatureKey = SignatureKey(key: try key(csrk, "key", at: "\(at).csrk"), signCounter: try integer(csrk, "sign_counter", at: "\(at).csrk"))
            }
            return result
        }
    }
}
