import BluetoothCore
import GATT

/// What a bond keeps of a GATT client (``PeripheralManager/bondedStateAttachment``), as
/// JSON: `{"configurations":[HANDLE,VALUE,...],"characteristicTypes":[HANDLE,"UUID",...],
/// "supportedFeatures":N,"databaseHash":[...],"wasChangeAware":BOOL}`, the layout
/// Foundation's JSONEncoder gave the files written before (a dictionary with integer keys
/// as alternating keys and values), so they still read; those have no
/// `characteristicTypes`.
enum BondedClientStateFile {
    static func encode(_ state: GATTBondedClientState) -> [UInt8] {
        let configurations = state.configurations.sorted { $0.key < $1.key }.flatMap { [JSONValue.int(Int($0.key)), .int(Int($0.value))] }
        let types = state.characteristicTypes.sorted { $0.key < $1.key }.flatMap { [JSONValue.int(Int($0.key)), .string($0.value.description)] }
        var writer = JSONWriter()
        JSONValue.object([
            ("configurations", .array(configurations)),
            ("characteristicTypes", .array(types)),
            ("supportedFeatures", .int(Int(state.supportedFeatures))),
            ("databaseHash", .array(state.databaseHash.map { .int(Int($0)) })),
            ("wasChangeAware", .bool(state.wasChangeAware)),
        ]).write(to: &writer)
        return writer.bytes
    }

    /// Nil for anything that is not such a file (damaged, or written by something else).
    static func decode(_ bytes: [UInt8]) -> GATTBondedClientState? {
        guard let file = try? JSONValue(parsing: String(decoding: bytes, as: UTF8.self)),
            let pairs = file["configurations"]?.arrayValue?.map({ $0.intValue.flatMap(UInt16.init(exactly:)) }), pairs.count.isMultiple(of: 2),
            let supportedFeatures = file["supportedFeatures"]?.intValue.flatMap(UInt8.init(exactly:)),
            let hash = file["databaseHash"]?.arrayValue?.map({ $0.intValue.flatMap(UInt8.init(exactly:)) }),
            let wasChangeAware = file["wasChangeAware"]?.boolValue
        else { return nil }
        var configurations: [UInt16: UInt16] = [:]
        for index in stride(from: 0, to: pairs.count, by: 2) {
            guard let handle = pairs[index], let value = pairs[index + 1] else { return nil }
            configurations[handle] = value
        }
        guard !hash.contains(nil) else { return nil }
        var types: [UInt16: BluetoothUUID] = [:]
        if let list = file["characteristicTypes"] {
            guard let entries = list.arrayValue, entries.count.isMultiple(of: 2) else { return nil }
            for index in stride(from: 0, to: entries.count, by: 2) {
                guard let handle = entries[index].intValue.flatMap(UInt16.init(exactly:)),
                    let type = entries[index + 1].stringValue.flatMap(BluetoothUUID.init)
                else { return nil }
                types[handle] = type
            }
        }
        return GATTBondedClientState(
            configurations: configurations, characteristicTypes: types, supportedFeatures: supportedFeatures,
            databaseHash: hash.compactMap { $0 }, wasChangeAware: wasChangeAware)
    }
}
