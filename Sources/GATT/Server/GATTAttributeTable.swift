import ATT
import BluetoothCore

/// Our database flattened into ATT attributes in handle order, each with where its value
/// comes from: what the ATT server walks for discovery and what the store reads and writes.
/// Rebuilt whenever services are added or removed; values never change it.
struct GATTAttributeTable: Sendable {
    struct CharacteristicPath: Hashable, Sendable {
        var service: Int
        var characteristic: Int
    }

    enum Source: Sendable, Hashable {
        /// A service, include or characteristic declaration: its value follows from the
        /// database's structure.
        case declaration([UInt8])
        case characteristicValue(CharacteristicPath)
        case descriptor(CharacteristicPath, index: Int)
        /// A CCCD: its value is per bearer (Part G 3.3.3.3).
        case clientConfiguration(valueHandle: UInt16, properties: CharacteristicProperties)
        /// The GATT service's own characteristics (Part G 7), served from the store's state.
        case clientSupportedFeatures
        case databaseHash
        case serviceChanged
    }

    private(set) var attributes: [ATTAttribute] = []
    private(set) var sources: [Source] = []

    init(_ database: GATTDatabase) {
        for (s, service) in database.services.enumerated() {
            let type = service.isPrimary ? GATTUUID.primaryService : GATTUUID.secondaryService
            append(service.handles.lowerBound, type, .readOnly, .declaration(service.uuid.attributeBytes), groupEnd: service.handles.upperBound)
            for include in service.includes {
                append(include.handle, GATTUUID.include, .readOnly, .declaration(include.declarationValue))
            }
            for (c, characteristic) in service.characteristics.enumerated() {
                let path = CharacteristicPath(service: s, characteristic: c)
                let permissions = characteristic.permissions ?? Self.permissions(for: characteristic.properties)
                append(characteristic.handle, GATTUUID.characteristicDeclaration, .readOnly, .declaration(characteristic.declaration.bytes))
                append(characteristic.valueHandle, characteristic.uuid, permissions, Self.valueSource(of: characteristic, in: service, path: path))
                for (d, descriptor) in characteristic.descriptors.enumerated() {
                    if descriptor.uuid == GATTUUID.clientCharacteristicConfiguration {
                        append(descriptor.handle, descriptor.uuid, descriptor.permissions ?? Self.subscriptionPermissions(valueRead: permissions.read),
                               .clientConfiguration(valueHandle: characteristic.valueHandle, properties: characteristic.properties))
                    } else {
                        append(descriptor.handle, descriptor.uuid, descriptor.permissions ?? .readOnly, .descriptor(path, index: d))
                    }
                }
            }
        }
    }

    private mutating func append(_ handle: UInt16, _ type: BluetoothUUID, _ permissions: ATTPermissions, _ source: Source, groupEnd: UInt16? = nil) {
        attributes.append(ATTAttribute(handle: handle, type: type, permissions: permissions, groupEnd: groupEnd))
        sources.append(source)
    }

    /// What the properties promise, unprotected: an application that wants encryption or
    /// authorization says so in the characteristic's `permissions`.
    static func permissions(for properties: CharacteristicProperties) -> ATTPermissions {
        ATTPermissions(
            read: properties.contains(.read) ? .open : nil,
            write: properties.isDisjoint(with: [.write, .writeWithoutResponse, .authenticatedSignedWrites]) ? nil : .open
        )
    }

    /// A CCCD's when the application declared none: anyone reads it; writing it (subscribing)
    /// asks the protection and key size that reading the value asks, so a central is
    /// refused a subscription (0x05, 0x0F, 0x0C) where it would be refused a read, and pairs
    /// first. Authorization stays with the value's reads: it is the application's to give
    /// per request, and a CCCD write is not one.
    static func subscriptionPermissions(valueRead: ATTPermissions.Access?) -> ATTPermissions {
        ATTPermissions(read: .open, write: valueRead.map { .init(protection: $0.protection, minimumKeySize: $0.minimumKeySize) } ?? .open)
    }

    /// What a link must have for the value at `valueHandle` to go to it in a notification
    /// or an indication: what reading the value asks (when it can be read) and what writing
    /// its CCCD asks, the stronger protection and the larger key size of the two.
    /// Authorization is not asked: nothing decides it outside a request.
    func deliveryAccess(of valueHandle: UInt16) -> ATTPermissions.Access {
        guard let index = index(of: valueHandle) else { return .open }
        var access = ATTPermissions.Access.open
        func ask(_ needed: ATTPermissions.Access?) {
            guard let needed else { return }
            access.protection = max(access.protection, needed.protection)
            access.minimumKeySize = max(access.minimumKeySize, needed.minimumKeySize)
        }
        ask(attributes[index].permissions.read)
        var next = index + 1
        descriptors: while next < sources.count {
            switch sources[next] {
            case .clientConfiguration: ask(attributes[next].permissions.write)
            case .descriptor: break
            default: break descriptors
            }
            next += 1
        }
        return access
    }

    private static func valueSource(of characteristic: GATTDatabase.Characteristic, in service: GATTDatabase.Service, path: CharacteristicPath) -> Source {
        guard service.uuid == GATTUUID.genericAttribute else { return .characteristicValue(path) }
        switch characteristic.uuid {
        case GATTUUID.clientSupportedFeatures: return .clientSupportedFeatures
        case GATTUUID.databaseHash: return .databaseHash
        case GATTUUID.serviceChanged: return .serviceChanged
        default: return .characteristicValue(path)
        }
    }

    /// The index of the first attribute at or after `handle`.
    func firstIndex(atOrAfter handle: UInt16) -> Int {
        var low = 0
        var high = attributes.count
        while low < high {
            let middle = (low + high) / 2
            if attributes[middle].handle < handle { low = middle + 1 } else { high = middle }
        }
        return low
    }

    func index(of handle: UInt16) -> Int? {
        let index = firstIndex(atOrAfter: handle)
        return index < attributes.count && attributes[index].handle == handle ? index : nil
    }

    /// The first attribute with `source` (the GATT service's characteristics).
    func handle(of source: Source) -> UInt16? {
        sources.firstIndex(of: source).map { attributes[$0].handle }
    }
}
