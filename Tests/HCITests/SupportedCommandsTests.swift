import BluetoothCore
import HCI
import Testing

@Suite struct SupportedCommandsTests {
    @Test func needsExactlySixtyFourOctets() throws {
        #expect(throws: DecodeError.lengthMismatch(declared: 64, actual: 63)) { try SupportedCommands(octets: Array(repeating: 0, count: 63)) }
        #expect(throws: DecodeError.lengthMismatch(declared: 64, actual: 65)) { try SupportedCommands(octets: Array(repeating: 0, count: 65)) }
        var reader = ByteReader(Array(repeating: 0xFF, count: 10))
        #expect(throws: DecodeError.truncated(needed: 64, available: 10)) { try ReadLocalSupportedCommands.ReturnParameters(decoding: &reader) }
    }

    @Test func knownBitPositions() throws {
        #expect(LESetExtendedScanEnable.supportedCommandBit! == (37, 6))
        #expect(LEReadBufferSizeV2.supportedCommandBit! == (41, 5))
        #expect(Reset.supportedCommandBit! == (5, 7))
        #expect(LESetEventMask.supportedCommandBit! == (25, 0))

        var octets = [UInt8](repeating: 0, count: 64)
        octets[37] = 1 << 6 // LE Set Extended Scan Enable
        octets[41] = 1 << 5 // LE Read Buffer Size [v2]
        let table = try SupportedCommands(octets: octets)
        #expect(table.supports(LESetExtendedScanEnable.self))
        #expect(table.supports(LEReadBufferSizeV2.self))
        #expect(!table.supports(LESetExtendedScanParameters.self)) // (37, 5)
        #expect(!table.supports(LEReadBufferSizeV1.self))
        #expect(!table.supports(Reset.self))
        // No bit of its own: every controller has it.
        #expect(table.supports(ReadLocalSupportedCommands.self))
        #expect(table.supportedCommandTypes.map { $0.name } == [
            "Read Local Supported Commands", "LE Read Buffer Size [v2]", "LE Set Extended Scan Enable",
        ])
        #expect(table.count == 2)
        #expect(table.isSet(octet: 41, bit: 5))
        #expect(!table.isSet(octet: 64, bit: 0))
        #expect(!table.isSet(octet: -1, bit: 0))
        #expect(!table.isSet(octet: 0, bit: 8))
    }

    @Test func builtFromCommandsSupportsExactlyThem() {
        let commands: [any HCICommand.Type] = [Reset.self, LESetScanEnable.self, LECreateConnection.self]
        let table = SupportedCommands(commands: commands)
        #expect(table.count == 3)
        #expect(table.octets[5] == 0x80)
        #expect(table.octets[26] == 0x18)
        let everything = SupportedCommands(commands: HCICommands.all)
        #expect(everything.supportedCommandTypes.count == HCICommands.all.count)
        #expect(everything.count == HCICommands.all.count - 1) // Read Local Supported Commands has no bit
    }

    @Test func decodesThroughReadLocalSupportedCommands() throws {
        // A typical LE-only 5.x controller: Reset, Set Event Mask, LE basics.
        var octets = [UInt8](repeating: 0, count: 64)
        octets[5] = 0xC0
        octets[25] = 0xF7
        var reader = ByteReader(octets)
        let returned = try ReadLocalSupportedCommands.ReturnParameters(decoding: &reader)
        #expect(returned.commands.supports(Reset.self))
        #expect(returned.commands.supports(SetEventMask.self))
        #expect(returned.commands.supports(LESetAdvertisingData.self))
        #expect(returned.commands.supports(LEReadLocalSupportedFeatures.self))
        #expect(returned.commands.supports(LESetRandomAddress.self))
        #expect(returned.commands.supports(LEReadBufferSizeV1.self))
        // Octet 25 bit 3 is reserved and clear; nothing outside the two octets is set.
        #expect(!returned.commands.isSet(octet: 25, bit: 3))
        #expect(!returned.commands.supports(Disconnect.self))
        #expect(returned.commands.description.hasPrefix("SupportedCommands(9 bits set"))
    }
}
