import BluetoothCore
import GATT
import Testing
@testable import BareBLE

/// What a bond keeps of a GATT client, read and written without Foundation: the files
/// Foundation's JSONEncoder wrote still read; anything else is refused (nil, counted by
/// the PeripheralManager), never trapped on.
@Suite struct BondedClientStateFileTests {
    /// Written by the previous PeripheralManager (FoundationEssentials' JSONEncoder).
    static let writtenByFoundation = #"{"databaseHash":[183,253,236,122,130,212,102,132,70,229,249,209,218,81,139,240],"configurations":[28,1],"wasChangeAware":true,"supportedFeatures":0}"#

    @Test func aFileFoundationWroteReads() throws {
        let state = try #require(BondedClientStateFile.decode(Array(Self.writtenByFoundation.utf8)))
        #expect(state == GATTBondedClientState(
            configurations: [28: 1], supportedFeatures: 0,
            databaseHash: [183, 253, 236, 122, 130, 212, 102, 132, 70, 229, 249, 209, 218, 81, 139, 240], wasChangeAware: true))
    }

    @Test func statesRoundTrip() {
        for state in [
            GATTBondedClientState(configurations: [:], supportedFeatures: 0, databaseHash: [], wasChangeAware: false),
            GATTBondedClientState(configurations: [0x0010: 0x0001, 0xFFFF: 0x0002, 0x0003: 0xFFFF], supportedFeatures: 0x07, databaseHash: Array(0...15), wasChangeAware: true),
            GATTBondedClientState(
                configurations: [0x0010: 0x0001, 0x0014: 0x0002], characteristicTypes: [0x0010: BluetoothUUID(UInt16(0x2A37)), 0x0014: BluetoothUUID("B4AE0005-7E57-4BA2-B1E0-00000000C0DE")!],
                supportedFeatures: 0x01, databaseHash: Array(0...15), wasChangeAware: false),
        ] {
            #expect(BondedClientStateFile.decode(BondedClientStateFile.encode(state)) == state)
        }
    }

    @Test(arguments: [
        "", "{}", "[]", "not json",
        #"{"databaseHash":[],"configurations":[28],"wasChangeAware":true,"supportedFeatures":0}"#,
        #"{"databaseHash":[],"configurations":[70000,1],"wasChangeAware":true,"supportedFeatures":0}"#,
        #"{"databaseHash":[],"configurations":[28,-1],"wasChangeAware":true,"supportedFeatures":0}"#,
        #"{"databaseHash":[256],"configurations":[],"wasChangeAware":true,"supportedFeatures":0}"#,
        #"{"databaseHash":["a"],"configurations":[],"wasChangeAware":true,"supportedFeatures":0}"#,
        #"{"databaseHash":[],"configurations":[],"wasChangeAware":1,"supportedFeatures":0}"#,
        #"{"databaseHash":[],"configurations":[],"wasChangeAware":true,"supportedFeatures":300}"#,
        #"{"databaseHash":[],"configurations":{"28":1},"wasChangeAware":true,"supportedFeatures":0}"#,
        #"{"databaseHash":[],"configurations":[],"wasChangeAware":true}"#,
        #"{"databaseHash":[],"configurations":[],"characteristicTypes":[28],"wasChangeAware":true,"supportedFeatures":0}"#,
        #"{"databaseHash":[],"configurations":[],"characteristicTypes":[28,"not a uuid"],"wasChangeAware":true,"supportedFeatures":0}"#,
        #"{"databaseHash":[],"configurations":[],"characteristicTypes":[70000,"2A37"],"wasChangeAware":true,"supportedFeatures":0}"#,
    ])
    func aDamagedFileIsRefused(_ text: String) {
        #expect(BondedClientStateFile.decode(Array(text.utf8)) == nil)
    }
}
