import BluetoothCore
import Bonding
import SMP
import Testing

/// The bond file's JSON, read and written without Foundation: files Foundation's
/// JSONEncoder wrote still read and are rewritten byte for byte, and every field that is
/// missing, of the wrong type or out of range is reported by name, never trapped on.
@Suite struct BondFileFormatTests {
    typealias F = BondFixtures

    /// Written by the previous BondFileFormat (FoundationEssentials' JSONEncoder,
    /// prettyPrinted and sortedKeys) for `F.bond(1)`.
    static let writtenByFoundation = """
        {
          "bonds" : [
            {
              "authenticated" : false,
              "created" : 1763788801,
              "local_keys" : {
                "ltk" : {
                  "ediv" : 65535,
                  "key" : "42607af29cdbd2102586e4e0d8de6d92",
                  "key_size" : 7,
                  "rand" : "ffffffffffffffff"
                }
              },
              "peer" : {
                "address" : "C4:4B:4D:00:00:01",
                "type" : "random"
              },
              "peer_keys" : {
                "csrk" : {
                  "key" : "744c9d5ddc6c9f9fc9103aae30562acf",
                  "sign_counter" : 1
                },
                "irk" : "4a7e67e445ac55ce3f568bfb06f03152",
                "ltk" : {
                  "ediv" : 77,
                  "key" : "f0d27fafaf47ea05b4d8abfb5785cbcb",
                  "key_size" : 16,
                  "rand" : "4cdaae78b6ec6593"
                }
              },
              "secure_connections" : true
            }
          ],
          "format" : "bareble-bonds",
          "local" : {
            "address" : "F0:0D:00:00:00:01",
            "irk" : "056ffb4b32cb30cfdc802a2da89d5b9c",
            "type" : "public"
          },
          "version" : 1
        }

        """

    static let expected = StoredBonds(
        local: try! LocalIdentity(
            address: DeviceAddress(F.localPublic, type: .public), identityResolvingKey: SMPValue128(hex: "056ffb4b32cb30cfdc802a2da89d5b9c")!),
        bonds: [F.bond(1)])

    @Test func aFileFoundationWroteReadsAndIsRewrittenByteForByte() throws {
        let bytes = Array(Self.writtenByFoundation.utf8)
        #expect(try BondFileFormat.decode(bytes, path: "f") == Self.expected)
        #expect(BondFileFormat.encode(Self.expected) == bytes)
    }

    static let damage: [(replace: String, with: String, reason: String)] = [
        ("\"ediv\" : 77", "\"ediv\" : 70000", "bonds[0].peer_keys.ltk.ediv: 70000 is out of range"),
        ("\"sign_counter\" : 1", "\"sign_counter\" : -1", "bonds[0].peer_keys.csrk.sign_counter: -1 is out of range"),
        ("\"key_size\" : 16", "\"key_size\" : 300", "bonds[0].peer_keys.ltk.key_size: 300 is out of range"),
        ("\"key_size\" : 7", "\"key_size\" : 6", "bonds[0].local_keys.ltk.key_size: 6 is outside 7...16"),
        ("\"authenticated\" : false", "\"authenticated\" : \"no\"", "bonds[0].authenticated: wrong type"),
        ("\"created\" : 1763788801", "\"created\" : 1.5", "bonds[0].created: wrong type"),
        ("\"type\" : \"random\"", "\"kind\" : \"random\"", "bonds[0].peer: missing \"type\""),
        ("\"irk\" : \"4a7e67e445ac55ce3f568bfb06f03152\"", "\"irk\" : [\"x\"]", "bonds[0].peer_keys.irk: wrong type"),
        ("\"rand\" : \"4cdaae78b6ec6593\"", "\"rand\" : \"4cdaae78b6ec659\"", "bonds[0].peer_keys.ltk.rand: not 16 hex digits"),
        ("\"local\" : {", "\"local\" : 1, \"x\" : {", "local: wrong type"),
        ("\"bonds\" : [", "\"bonds\" : 1, \"x\" : [", "bonds: wrong type"),
        ("\"address\" : \"F0:0D:00:00:00:01\"", "\"address\" : \"F0:0D\"", "local: \"F0:0D\" is not an address"),
        ("\"sign_counter\" : 1", "\"sign_counter\" : " + String(repeating: "[", count: 5000), "not a JSON object"),
    ]

    @Test(arguments: 0..<damage.count) func aDamagedFieldIsNamed(_ which: Int) {
        let (replace, with, reason) = Self.damage[which]
        let text = Self.writtenByFoundation.replacing(replace, with: with, maxReplacements: 1)
        #expect(text != Self.writtenByFoundation)
        let error = #expect(throws: BondStoreError.self) { try BondFileFormat.decode(Array(text.utf8), path: "f") }
        guard case let .corrupt(path, found)? = error else {
            Issue.record("\(String(describing: error))")
            return
        }
        #expect(path == "f")
        #expect(found.hasPrefix(reason), "\(found)")
    }
}
