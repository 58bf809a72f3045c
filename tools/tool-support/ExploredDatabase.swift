import ATT
import BareBLE
import BluetoothCore
import GATT
import Trace

/// A peer's GATT database with what was read of it: what `bareble-central explore` found,
/// or what `bareble-trace gatt` rebuilt from a trace of a discovery. One model and one JSON
/// form for both (`bareble-peripheral serve --database` reads it back).
public struct ExploredDatabase: Sendable {
    public var peer: DeviceAddress?
    public var mtu: UInt16
    /// Services, includes, characteristics and descriptors; their `value` fields are not
    /// used here (``readings`` are).
    public var database: GATTDatabase
    /// What each characteristic value and descriptor read gave, by handle; a handle not
    /// read is absent (its value is null).
    public var readings: [UInt16: ValueReading]

    public init(peer: DeviceAddress?, mtu: UInt16, database: GATTDatabase, readings: [UInt16: ValueReading]) {
        self.peer = peer
        self.mtu = mtu
        self.database = database
        self.readings = readings
    }

    /// A database rebuilt from a trace: values decoded as the explorer decodes them (a
    /// characteristic's by its Presentation Format when one was read), a refused read as
    /// the error the explorer would have shown for the same Error Response.
    public init(_ rebuilt: TraceGATTDatabase.Result) {
        var readings: [UInt16: ValueReading] = [:]
        for (handle, failure) in rebuilt.failures {
            readings[handle] = ValueReading(error: .gatt(.att(.errorResponse(request: failure.request, handle: handle, code: failure.code))))
        }
        let decoder = CharacteristicValueDecoder.standard
        for characteristic in rebuilt.database.services.flatMap(\.characteristics) {
            if let value = characteristic.value {
                let format = characteristic.descriptors.first { $0.uuid == GATTUUID.characteristicPresentationFormat }?.value
                    .flatMap { try? CharacteristicPresentationFormat(bytes: $0) }
                readings[characteristic.valueHandle] = ValueReading(value: value, decoded: decoder.decode(value, uuid: characteristic.uuid, presentationFormat: format))
            }
            for descriptor in characteristic.descriptors {
                if let value = descriptor.value { readings[descriptor.handle] = ValueReading(value: value, decoded: decoder.decode(value, uuid: descriptor.uuid)) }
            }
        }
        self.init(peer: rebuilt.peer, mtu: rebuilt.mtu, database: rebuilt.database, readings: readings)
    }

    /// The GAP Device Name, when it was read (as ``Peripheral/name``).
    public var name: String? {
        guard let device = database.service(GATTUUID.genericAccess)?.characteristics.first(where: { $0.uuid == GATTUUID.deviceName }),
              let value = readings[device.valueHandle]?.value
        else { return nil }
        return GATTString.decode(value)
    }

    public var json: JSONValue {
        .object([
            ("address", peer.map { .string($0.address.description) } ?? .null),
            ("addressType", peer.map { .string($0.type.description) } ?? .null),
            ("name", name.map(JSONValue.string) ?? .null),
            ("mtu", .int(Int(mtu))),
            ("databaseHash", database.databaseHash.map { .string(Hex.string($0)) } ?? .null),
            ("services", .array(database.services.map { service in
                .object([
                    ("handle", .int(Int(service.handles.lowerBound))),
                    ("end", .int(Int(service.handles.upperBound))),
                    ("uuid", .string(service.uuid.description)),
                    ("name", GATTNames.service(for: service.uuid).map(JSONValue.string) ?? .null),
                    ("primary", .bool(service.isPrimary)),
                    ("includes", .array(service.includes.map { include in
                        .object([
                            ("handle", .int(Int(include.handle))),
                            ("start", .int(Int(include.serviceHandles.lowerBound))),
                            ("end", .int(Int(include.serviceHandles.upperBound))),
                            ("uuid", .string(include.uuid.description)),
                        ])
                    })),
                    ("characteristics", .array(service.characteristics.map(characteristicJSON))),
                ])
            })),
        ])
    }

    private func characteristicJSON(_ characteristic: GATTDatabase.Characteristic) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("handle", .int(Int(characteristic.handle))),
            ("valueHandle", .int(Int(characteristic.valueHandle))),
            ("end", .int(Int(characteristic.endHandle))),
            ("uuid", .string(characteristic.uuid.description)),
            ("name", GATTNames.characteristic(for: characteristic.uuid).map(JSONValue.string) ?? .null),
            ("properties", .int(Int(characteristic.properties.rawValue))),
            ("propertyNames", .array(characteristic.properties.names.map(JSONValue.string))),
        ]
        members += (readings[characteristic.valueHandle] ?? ValueReading()).jsonMembers
        members.append(("descriptors", .array(characteristic.descriptors.map { descriptor in
            .object([
                ("handle", .int(Int(descriptor.handle))),
                ("uuid", .string(descriptor.uuid.description)),
                ("name", GATTNames.descriptor(for: descriptor.uuid).map(JSONValue.string) ?? .null),
            ] + (readings[descriptor.handle] ?? ValueReading()).jsonMembers)
        })))
        return .object(members)
    }
}
