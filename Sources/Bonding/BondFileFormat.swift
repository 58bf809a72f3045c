import BluetoothCore
import FoundationEssentials
import SMP

/// What one bond file holds: the local identity it belongs to and its bonds.
public struct StoredBonds: Sendable, Hashable {
    public var local: LocalIdentity
    /// In identity address order, one per peer identity.
    public var bonds: [Bond]

    public init(local: LocalIdentity, bonds: [Bond] = []) {
        self.local = local
        self.bonds = bonds.sorted { ($0.peer.address, $0.peer.type.rawValue) < ($1.peer.address, $1.peer.type.rawValue) }
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

    struct Header: Codable {
        var format: String?
        var version: Int?
    }

    struct File: Codable {
        var format: String
        var version: Int
        var local: Local
        var bonds: [Entry]
    }

    struct Address: Codable {
        var address: String
        var type: String
    }

    struct Local: Codable {
        var address: String
        var type: String
        var irk: String
    }

    struct Entry: Codable {
        var peer: Address
        var authenticated: Bool
        var secure_connections: Bool
        var created: Int64
        var peer_keys: Keys
        var local_keys: Keys
    }

    struct Keys: Codable {
        var ltk: LTK?
        var irk: String?
        var csrk: CSRK?
    }

    struct LTK: Codable {
        var key: String
        var ediv: UInt16
        var rand: String
        var key_size: UInt8
    }

    struct CSRK: Codable {
        var key: String
        var sign_counter: UInt32
    }

    // MARK: Encoding

    public static func encode(_ stored: StoredBonds) -> [UInt8] {
        let file = File(
            format: formatName, version: version,
            local: Local(address: stored.local.address.address.description, type: typeName(stored.local.address.type),
                         irk: hex(stored.local.identityResolvingKey)),
            bonds: stored.bonds.map(entry))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        // Encoding plain strings, numbers and booleans cannot fail.
        guard let data = try? encoder.encode(file) else { preconditionFailure("JSONEncoder refused plain values") }
        return Array(data) + [0x0A]
    }

    static func entry(_ bond: Bond) -> Entry {
        Entry(
            peer: Address(address: bond.peer.address.description, type: typeName(bond.peer.type)),
            authenticated: bond.authenticated, secure_connections: bond.secureConnections, created: bond.createdAt,
            peer_keys: keys(bond.peerKeys), local_keys: keys(bond.localKeys))
    }

    static func keys(_ keys: DistributedKeys) -> Keys {
        Keys(
            ltk: keys.longTermKey.map { LTK(key: hex($0.key), ediv: $0.ediv, rand: hex64($0.rand), key_size: $0.keySize) },
            irk: keys.identityResolvingKey.map(hex),
            csrk: keys.signatureKey.map { CSRK(key: hex($0.key), sign_counter: $0.signCounter) })
    }

    static func hex(_ value: SMPValue128) -> String { Hex.string(value.bigEndianBytes).lowercased() }

    static func hex64(_ value: UInt64) -> String {
        Hex.string((0..<8).map { UInt8(truncatingIfNeeded: value >> (8 * (7 - $0))) }).lowercased()
    }

    static func typeName(_ type: AddressType) -> String { type.isRandom ? "random" : "public" }

    // MARK: Decoding (total: every failure is a typed error naming the field)

    /// Parses a bond file; `path` only names it in errors.
    public static func decode(_ bytes: [UInt8], path: String) throws(BondStoreError) -> StoredBonds {
        let data = Data(bytes)
        let decoder = JSONDecoder()
        let header: Header
        do {
            header = try decoder.decode(Header.self, from: data)
        } catch {
            throw .corrupt(path: path, reason: bytes.isEmpty ? "the file is empty" : "not a JSON object (truncated or overwritten?)")
        }
        guard header.format == formatName else {
            throw .corrupt(path: path, reason: "\"format\" is \(header.format.map { "\"\($0)\"" } ?? "missing"), not \"\(formatName)\"")
        }
        guard let fileVersion = header.version else { throw .corrupt(path: path, reason: "no \"version\"") }
        guard fileVersion == version else { throw .unsupportedVersion(path: path, version: fileVersion) }
        let file: File
        do {
            file = try decoder.decode(File.self, from: data)
        } catch let error as DecodingError {
            throw .corrupt(path: path, reason: describe(error))
        } catch {
            throw .corrupt(path: path, reason: "\(error)")
        }
        return try stored(file, path: path)
    }

    static func stored(_ file: File, path: String) throws(BondStoreError) -> StoredBonds {
        let field = FieldChecker(path: path)
        let localAddress = try field.address(file.local.address, type: file.local.type, at: "local")
        let local: LocalIdentity
        do {
            local = try LocalIdentity(address: localAddress, identityResolvingKey: try field.key(file.local.irk, at: "local.irk"))
        } catch .invalidIdentity {
            throw .corrupt(path: path, reason: "local: \(localAddress) is not an identity address")
        }
        var bonds: [Bond] = []
        var seen = Set<DeviceAddress>()
        for (index, entry) in file.bonds.enumerated() {
            let at = "bonds[\(index)]"
            let peer = try field.address(entry.peer.address, type: entry.peer.type, at: "\(at).peer")
            guard seen.insert(peer).inserted else { throw .corrupt(path: path, reason: "\(at): \(peer) is stored twice") }
            bonds.append(Bond(
                peer: peer,
                peerKeys: try field.keys(entry.peer_keys, at: "\(at).peer_keys"),
                localKeys: try field.keys(entry.local_keys, at: "\(at).local_keys"),
                authenticated: entry.authenticated, secureConnections: entry.secure_connections,
                createdAt: entry.created))
        }
        return StoredBonds(local: local, bonds: bonds)
    }

    struct FieldChecker {
        let path: String

        func fail(_ at: String, _ what: String) -> BondStoreError { .corrupt(path: path, reason: "\(at): \(what)") }

        func address(_ text: String, type: String, at: String) throws(BondStoreError) -> DeviceAddress {
            guard let address = BluetoothAddress(text) else { throw fail(at, "\"\(text)\" is not an address") }
            switch type {
            case "public": return DeviceAddress(address, type: .public)
            case "random": return DeviceAddress(address, type: .random)
            default: throw fail(at, "address type \"\(type)\" is neither public nor random")
            }
        }

        func key(_ text: String, at: String) throws(BondStoreError) -> SMPValue128 {
            guard text.count == 32, let value = SMPValue128(hex: text) else { throw fail(at, "not 32 hex digits") }
            return value
        }

        func keys(_ keys: Keys, at: String) throws(BondStoreError) -> DistributedKeys {
            var result = DistributedKeys()
            if let ltk = keys.ltk {
                guard (7...16).contains(ltk.key_size) else { throw fail("\(at).ltk.key_size", "\(ltk.key_size) is outside 7...16") }
                guard ltk.rand.count == 16, let bytes = Hex.bytes(ltk.rand), bytes.count == 8 else {
                    throw fail("\(at).ltk.rand", "not 16 hex digits")
                }
                let rand = bytes.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
                result.longTermKey = LongTermKey(key: try key(ltk.key, at: "\(at).ltk.key"), ediv: ltk.ediv, rand: rand, keySize: ltk.key_size)
            }
            if let irk = keys.irk { result.identityResolvingKey = try key(irk, at: "\(at).irk") }
            if let csrk = keys.csrk {
                result.signatureKey = SignatureKey(key: try key(csrk.key, at: "\(at).csrk.key"), signCounter: csrk.sign_counter)
            }
            return result
        }
    }

    static func describe(_ error: DecodingError) -> String {
        func where_(_ context: DecodingError.Context) -> String {
            let path = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
            return path.isEmpty ? "top level" : String(path.drop(while: { $0 == "." }))
        }
        switch error {
        case let .keyNotFound(key, context): return "\(where_(context)): missing \"\(key.stringValue)\""
        case let .typeMismatch(_, context): return "\(where_(context)): wrong type"
        case let .valueNotFound(_, context): return "\(where_(context)): missing value"
        case let .dataCorrupted(context): return "\(where_(context)): \(context.debugDescription)"
        @unknown default: return "\(error)"
        }
    }
}
