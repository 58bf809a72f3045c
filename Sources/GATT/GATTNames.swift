import BluetoothCore

/// Human names for GATT attribute types, as an explorer prints them beside a UUID.
///
/// The 16-bit names are the Bluetooth SIG's Assigned Numbers (see GATTNameTable.swift);
/// the few 128-bit names are vendor services that BareBLE's own tools meet
/// (``VendorGATTNames``). Each lookup answers only for its own kind, so a characteristic
/// UUID asked for as a service gives nil: the kinds live in disjoint SIG ranges, and a
/// caller that knows what it holds should not be told a name of another kind.
public enum GATTNames {
    /// A primary or secondary service's name: "Heart Rate" for 0x180D.
    public static func service(for uuid: BluetoothUUID) -> String? {
        name(uuid, kind: .service)
    }

    /// A characteristic's name: "Battery Level" for 0x2A19.
    public static func characteristic(for uuid: BluetoothUUID) -> String? {
        name(uuid, kind: .characteristic)
    }

    /// A characteristic descriptor's name: "Client Characteristic Configuration" for 0x2902.
    public static func descriptor(for uuid: BluetoothUUID) -> String? {
        name(uuid, kind: .descriptor)
    }

    /// A declaration's name: "Primary Service", "Secondary Service", "Include" or
    /// "Characteristic" for 0x2800 to 0x2803.
    public static func declaration(for uuid: BluetoothUUID) -> String? {
        name(uuid, kind: .declaration)
    }

    /// A unit's SIG name, as the Characteristic Presentation Format carries it:
    /// "thermodynamic temperature (degree Celsius)"-style, "percentage" for 0x27AD.
    public static func unit(for uuid: BluetoothUUID) -> String? {
        name(uuid, kind: .unit)
    }

    /// The name of any attribute type this table knows, whatever its kind.
    public static func name(for uuid: BluetoothUUID) -> String? {
        if let short = uuid.shortValue, short <= 0xFFFF {
            return names[UInt16(short)]?.name
        }
        return VendorGATTNames.entries[uuid]?.name
    }

    /// What kind of attribute type `uuid` names, when it is known.
    public static func kind(of uuid: BluetoothUUID) -> Kind? {
        if let short = uuid.shortValue, short <= 0xFFFF {
            return names[UInt16(short)]?.kind
        }
        return VendorGATTNames.entries[uuid]?.kind
    }

    /// Every known 16-bit UUID of `kind`, ascending: for tests and for tools that list them.
    public static func allAssigned(_ kind: Kind) -> [UInt16] {
        names.filter { $0.value.kind == kind }.keys.sorted()
    }

    /// The kinds of attribute type the names are kept for.
    public enum Kind: Sendable, Hashable {
        case service, characteristic, descriptor, declaration, unit
    }

    private static func name(_ uuid: BluetoothUUID, kind: Kind) -> String? {
        if let short = uuid.shortValue, short <= 0xFFFF {
            guard let entry = names[UInt16(short)], entry.kind == kind else { return nil }
            return entry.name
        }
        guard let entry = VendorGATTNames.entries[uuid], entry.kind == kind else { return nil }
        return entry.name
    }

    // Parsed once, lazily and thread-safely (a static let).
    private static let names: [UInt16: (kind: Kind, name: String)] = {
        var names: [UInt16: (kind: Kind, name: String)] = [:]
        names.reserveCapacity(700)
        for line in table.split(separator: "\n") {
            // "    C 2A19 Battery Level": indentation, kind letter, four hex digits, name.
            let body = line.drop(while: { $0 == " " })
            guard body.count > 7, let number = UInt16(body.dropFirst(2).prefix(4), radix: 16) else { continue }
            let kind: Kind
            switch body.first {
            case "S": kind = .service
            case "C": kind = .characteristic
            case "D": kind = .descriptor
            case "G": kind = .declaration
            case "U": kind = .unit
            default: continue
            }
            names[number] = (kind, String(body.dropFirst(7)))
        }
        return names
    }()
}
