/// The catalogue of every command type BareBLE declares, for lookup by opcode (names in
/// traces and errors, Supported_Commands tables).
public enum HCICommands {
    public static let all: [any HCICommand.Type] = [
    ]

    private static let byOpcode: [HCIOpcode: any HCICommand.Type] = {
        var table: [HCIOpcode: any HCICommand.Type] = [:]
        for type in all { table[type.opcode] = type }
        return table
    }()

    public static func type(for opcode: HCIOpcode) -> (any HCICommand.Type)? { byOpcode[opcode] }
}
