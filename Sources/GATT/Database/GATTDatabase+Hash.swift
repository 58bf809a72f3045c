import BluetoothCore
import BluetoothCrypto

extension GATTDatabase {
    /// The Database Hash (Core 5.4 Vol 3 Part G 7.3.1) of this database as its
    /// characteristic carries it: a uint128, least significant octet first (as Bumble serves
    /// it; the specification's Appendix B prints the same number most significant first).
    /// Nil when a Characteristic Extended Properties descriptor's value is unknown (a
    /// discovered database before that descriptor was read), since the hash covers it.
    public var computedHash: [UInt8]? {
        guard let message = hashMessage else { return nil }
        return AESCMAC.mac(key: 0, message: message).littleEndianBytes
    }

    /// The descriptors whose values the hash covers but this database does not know: the
    /// Characteristic Extended Properties a client discovered without reading. Read them
    /// and set their `value` to make ``computedHash`` available.
    public var descriptorsUnknownToHash: [UInt16] {
        services.flatMap(\.characteristics).flatMap(\.descriptors)
            .filter { $0.uuid == GATTUUID.characteristicExtendedProperties && $0.value == nil }
            .map(\.handle)
    }

    /// Sets the value of the descriptor at `handle`, wherever it is; false when there is none.
    @discardableResult
    public mutating func setDescriptorValue(_ value: [UInt8], at handle: UInt16) -> Bool {
        for s in services.indices {
            for c in services[s].characteristics.indices {
                if let d = services[s].characteristics[c].descriptors.firstIndex(where: { $0.handle == handle }) {
                    services[s].characteristics[c].descriptors[d].value = value
                    return true
                }
            }
        }
        return false
    }

    /// What 7.3.1 authenticates, in handle order: handle, type and value of every service,
    /// include and characteristic declaration and of the Extended Properties descriptor;
    /// handle and type only of the User Description, CCCD, SCCD, Presentation Format and
    /// Aggregate Format descriptors; nothing of values or of any other descriptor. Types are
    /// these 16-bit UUIDs, two octets; handles and values as ATT carries them.
    var hashMessage: [UInt8]? {
        var writer = ByteWriter(capacity: 256)
        func attribute(_ handle: UInt16, _ type: BluetoothUUID, _ value: [UInt8] = []) {
            writer.write(handle)
            writer.write(contentsOf: type.littleEndianBytes)
            writer.write(contentsOf: value)
        }
        for service in services {
            attribute(service.handles.lowerBound, service.isPrimary ? GATTUUID.primaryService : GATTUUID.secondaryService, service.uuid.attributeBytes)
            for include in service.includes {
                attribute(include.handle, GATTUUID.include, include.declarationValue)
            }
            for characteristic in service.characteristics {
                attribute(characteristic.handle, GATTUUID.characteristicDeclaration, characteristic.declaration.bytes)
                for descriptor in characteristic.descriptors {
                    if descriptor.uuid == GATTUUID.characteristicExtendedProperties {
                        guard let value = descriptor.value else { return nil }
                        attribute(descriptor.handle, descriptor.uuid, value)
                    } else if Self.hashedByTypeOnly.contains(descriptor.uuid) {
                        attribute(descriptor.handle, descriptor.uuid)
                    }
                }
            }
        }
        return writer.bytes
    }

    private static let hashedByTypeOnly: Set<BluetoothUUID> = [
        GATTUUID.characteristicUserDescription, GATTUUID.clientCharacteristicConfiguration,
        GATTUUID.serverCharacteristicConfiguration, GATTUUID.characteristicPresentationFormat,
        GATTUUID.characteristicAggregateFormat,
    ]
}
