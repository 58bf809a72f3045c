import BluetoothCore

/// The SIG-assigned 16-bit UUIDs that BareBLE's code refers to by name (Assigned Numbers
/// 3.4 to 3.8). Names for every assigned UUID are in ``GATTNames``; this is the short list
/// of those the GATT client, server and decoders act on.
public enum GATTUUID {
    // Declarations (Core Vol 3 Part G 3.1 to 3.3).
    public static let primaryService = sig(0x2800)
    public static let secondaryService = sig(0x2801)
    public static let include = sig(0x2802)
    public static let characteristicDeclaration = sig(0x2803)

    // Descriptors (Core Vol 3 Part G 3.3.3).
    public static let characteristicExtendedProperties = sig(0x2900)
    public static let characteristicUserDescription = sig(0x2901)
    public static let clientCharacteristicConfiguration = sig(0x2902)
    public static let serverCharacteristicConfiguration = sig(0x2903)
    public static let characteristicPresentationFormat = sig(0x2904)
    public static let characteristicAggregateFormat = sig(0x2905)

    // Services.
    public static let genericAccess = sig(0x1800)
    public static let genericAttribute = sig(0x1801)
    public static let deviceInformation = sig(0x180A)
    public static let heartRate = sig(0x180D)
    public static let battery = sig(0x180F)

    // Characteristics of the GAP and GATT services (Core Vol 3 Part C 12, Part G 7).
    public static let deviceName = sig(0x2A00)
    public static let appearance = sig(0x2A01)
    public static let peripheralPreferredConnectionParameters = sig(0x2A04)
    public static let serviceChanged = sig(0x2A05)
    public static let centralAddressResolution = sig(0x2AA6)
    public static let clientSupportedFeatures = sig(0x2B29)
    public static let databaseHash = sig(0x2B2A)
    public static let serverSupportedFeatures = sig(0x2B3A)

    // Characteristics with a decoder here.
    public static let batteryLevel = sig(0x2A19)
    public static let heartRateMeasurement = sig(0x2A37)
    public static let bodySensorLocation = sig(0x2A38)
    public static let heartRateControlPoint = sig(0x2A39)
    public static let systemID = sig(0x2A23)
    public static let modelNumberString = sig(0x2A24)
    public static let serialNumberString = sig(0x2A25)
    public static let firmwareRevisionString = sig(0x2A26)
    public static let hardwareRevisionString = sig(0x2A27)
    public static let softwareRevisionString = sig(0x2A28)
    public static let manufacturerNameString = sig(0x2A29)
    public static let pnpID = sig(0x2A50)

    private static func sig(_ value: UInt16) -> BluetoothUUID { BluetoothUUID(value) }
}
