import BluetoothCore
@testable import CentralCommands
import ToolSupport
import HCI
import Testing

/// `bareble-central scan`'s live table against an advertiser that uses a new random
/// address for every packet: it stays within its bound, forgets the devices heard longest
/// ago and counts them, and keeps the one device heard all along.
@Suite struct ScanTableTests {
    @Test func aFloodOfNewAddressesStaysWithinTheBound() {
        var table = ScanTable()
        let steady = DeviceAddress(BluetoothAddress(0xC0FF_EE00_0001), type: .random)
        for index in 0..<20_000 {
            let address = DeviceAddress(BluetoothAddress(0x4000_0000_0000 | UInt64(index)), type: .random)
            table.add(Advertisement(address: address, eventType: [.legacy], rssi: -80, timestamp: UInt64(index)))
            if index.isMultiple(of: 100) { table.add(Advertisement(address: steady, eventType: [.legacy], rssi: -40, timestamp: UInt64(index))) }
            #expect(table.rows.count <= ScanTable.maximumRows)
        }
        #expect(table.rows.count + table.forgotten == 20_001)
        #expect(table.rows[steady]?.count == 200)
    }
}

/// What a peer names itself or writes in a notification reaches a terminal: control
/// characters are shown escaped (an ESC could rewrite the screen, a newline fake a line).
@Suite struct TerminalTextTests {
    @Test func controlCharactersAreEscapedAndOtherTextKept() {
        #expect(TerminalText.printable("Heart Rate ♥ 心拍") == "Heart Rate ♥ 心拍")
        #expect(TerminalText.printable("a\u{1B}]52;c;aGk=\u{07}b") == "a\\u{1B}]52;c;aGk=\\u{7}b")
        #expect(TerminalText.printable("x\nphone AA connected") == "x\\u{A}phone AA connected")
        #expect(TerminalText.printable("\u{7F}\u{9B}2J") == "\\u{7F}\\u{9B}2J")
    }
}
