import BluetoothCore
@testable import HCI
import Testing

/// The catalogue as a whole: every command is declared once, named, numbered and sampled.
@Suite struct CommandCatalogueTests {
    @Test func opcodesAndNamesAreUnique() {
        let opcodes = HCICommands.all.map { $0.opcode }
        #expect(Set(opcodes).count == opcodes.count)
        let names = HCICommands.all.map { $0.name }
        #expect(Set(names).count == names.count)
    }

    @Test func lookupByOpcodeFindsEveryCommand() {
        for type in HCICommands.all {
            #expect(HCICommands.type(for: type.opcode) == type, "\(type.name)")
            #expect(type.opcode.name == type.name)
        }
        #expect(HCIOpcode(ogf: 0x08, ocf: 0x0041).description == "LE Set Extended Scan Parameters")
        #expect(HCICommands.type(for: HCIOpcode(ogf: 0x3F, ocf: 0x0001)) == nil)
    }

    @Test func everyCommandHasASample() {
        let sampled = Set(Samples.commands.map { $0.type.opcode })
        for type in HCICommands.all {
            #expect(sampled.contains(type.opcode), "no sample for \(type.name)")
        }
    }

    @Test func everyReturnParametersTypeHasASample() {
        let sampled = Set(Samples.returns.map { ObjectIdentifier($0.returnType) })
        for type in HCICommands.all {
            #expect(sampled.contains(ObjectIdentifier(type.returnParametersType)), "no return sample for \(type.name)")
        }
    }

    /// Exactly the commands that finish with an event are answered with Command Status.
    @Test func commandStatusCommands() {
        let expected: Set<String> = [
            "Disconnect", "LE Create Connection", "LE Extended Create Connection", "LE Connection Update",
            "LE Read Remote Features", "LE Enable Encryption", "LE Set PHY", "Read Remote Version Information",
        ]
        let actual = Set(HCICommands.all.filter { $0.completesWithStatus }.map { $0.name })
        #expect(actual == expected)
    }

    /// Opcode and Supported_Commands position of every command, from Core Vol 4 Part E 7.x
    /// and 6.27. Kept as a second, independent copy so a slip in either place shows.
    static let specificationTable: [(name: String, opcode: UInt16, octet: Int?, bit: Int?)] = [
        ("Disconnect", 0x0406, 0, 5),
        ("Read Remote Version Information", 0x041D, 2, 7),
        ("Reset", 0x0C03, 5, 7),
        ("Set Event Mask", 0x0C01, 5, 6),
        ("Set Event Mask Page 2", 0x0C63, 22, 2),
        ("Write LE Host Support", 0x0C6D, 24, 6),
        ("Read Local Name", 0x0C14, 7, 1),
        ("Read Transmit Power Level", 0x0C2D, 10, 2),
        ("Read Local Version Information", 0x1001, 14, 3),
        ("Read Local Supported Commands", 0x1002, nil, nil),
        ("Read Local Supported Features", 0x1003, 14, 5),
        ("Read Buffer Size", 0x1005, 14, 7),
        ("Read BD_ADDR", 0x1009, 15, 1),
        ("Read RSSI", 0x1405, 15, 5),
        ("Read Encryption Key Size", 0x1408, 20, 4),
        ("LE Set Event Mask", 0x2001, 25, 0),
        ("LE Read Buffer Size [v1]", 0x2002, 25, 1),
        ("LE Read Local Supported Features", 0x2003, 25, 2),
        ("LE Set Random Address", 0x2005, 25, 4),
        ("LE Set Advertising Parameters", 0x2006, 25, 5),
        ("LE Read Advertising Physical Channel Tx Power", 0x2007, 25, 6),
        ("LE Set Advertising Data", 0x2008, 25, 7),
        ("LE Set Scan Response Data", 0x2009, 26, 0),
        ("LE Set Advertising Enable", 0x200A, 26, 1),
        ("LE Set Scan Parameters", 0x200B, 26, 2),
        ("LE Set Scan Enable", 0x200C, 26, 3),
        ("LE Create Connection", 0x200D, 26, 4),
        ("LE Create Connection Cancel", 0x200E, 26, 5),
        ("LE Read Filter Accept List Size", 0x200F, 26, 6),
        ("LE Clear Filter Accept List", 0x2010, 26, 7),
        ("LE Add Device To Filter Accept List", 0x2011, 27, 0),
        ("LE Remove Device From Filter Accept List", 0x2012, 27, 1),
        ("LE Connection Update", 0x2013, 27, 2),
        ("LE Read Remote Features", 0x2016, 27, 5),
        ("LE Encrypt", 0x2017, 27, 6),
        ("LE Rand", 0x2018, 27, 7),
        ("LE Enable Encryption", 0x2019, 28, 0),
        ("LE Long Term Key Request Reply", 0x201A, 28, 1),
        ("LE Long Term Key Request Negative Reply", 0x201B, 28, 2),
        ("LE Read Supported States", 0x201C, 28, 3),
        ("LE Remote Connection Parameter Request Reply", 0x2020, 33, 4),
        ("LE Remote Connection Parameter Request Negative Reply", 0x2021, 33, 5),
        ("LE Set Data Length", 0x2022, 33, 6),
        ("LE Read Suggested Default Data Length", 0x2023, 33, 7),
        ("LE Write Suggested Default Data Length", 0x2024, 34, 0),
        ("LE Add Device To Resolving List", 0x2027, 34, 3),
        ("LE Remove Device From Resolving List", 0x2028, 34, 4),
        ("LE Clear Resolving List", 0x2029, 34, 5),
        ("LE Read Resolving List Size", 0x202A, 34, 6),
        ("LE Set Address Resolution Enable", 0x202D, 35, 1),
        ("LE Set Resolvable Private Address Timeout", 0x202E, 35, 2),
        ("LE Read Maximum Data Length", 0x202F, 35, 3),
        ("LE Read PHY", 0x2030, 35, 4),
        ("LE Set Default PHY", 0x2031, 35, 5),
        ("LE Set PHY", 0x2032, 35, 6),
        ("LE Set Advertising Set Random Address", 0x2035, 36, 1),
        ("LE Set Extended Advertising Parameters", 0x2036, 36, 2),
        ("LE Set Extended Advertising Data", 0x2037, 36, 3),
        ("LE Set Extended Scan Response Data", 0x2038, 36, 4),
        ("LE Set Extended Advertising Enable", 0x2039, 36, 5),
        ("LE Read Maximum Advertising Data Length", 0x203A, 36, 6),
        ("LE Read Number of Supported Advertising Sets", 0x203B, 36, 7),
        ("LE Remove Advertising Set", 0x203C, 37, 0),
        ("LE Clear Advertising Sets", 0x203D, 37, 1),
        ("LE Set Extended Scan Parameters", 0x2041, 37, 5),
        ("LE Set Extended Scan Enable", 0x2042, 37, 6),
        ("LE Extended Create Connection", 0x2043, 37, 7),
        ("LE Read Transmit Power", 0x204B, 38, 7),
        ("LE Set Privacy Mode", 0x204E, 39, 2),
        ("LE Read Buffer Size [v2]", 0x2060, 41, 5),
    ]

    @Test func opcodesAndBitsMatchTheSpecification() throws {
        #expect(Self.specificationTable.count == HCICommands.all.count)
        for row in Self.specificationTable {
            let type = try #require(HCICommands.type(for: HCIOpcode(rawValue: row.opcode)), "\(row.name)")
            #expect(type.name == row.name)
            #expect(type.supportedCommandBit?.octet == row.octet, "\(row.name)")
            #expect(type.supportedCommandBit?.bit == row.bit, "\(row.name)")
        }
    }
}

extension HCICommand {
    static var returnParametersType: any HCIReturnParameters.Type { ReturnParameters.self }
}
