import BluetoothCore

/// The few 128-bit vendor services (and their characteristics) that BareBLE's tools meet.
///
/// Kept short on purpose: an explorer shows any other 128-bit UUID as it is. Sources: Apple's
/// "Apple Notification Center Service (ANCS) Specification" and "Apple Media Service
/// Specification" (Apple Developer documentation), and Nordic Semiconductor's "Nordic UART
/// Service" documentation (nRF Connect SDK); the UUIDs agree with the copies in Bumble's
/// gatt.py.
public enum VendorGATTNames {
    // Apple Notification Center Service.
    public static let ancsService = uuid("7905F431-B5CE-4E99-A40F-4B1E122D00D0")
    public static let ancsNotificationSource = uuid("9FBF120D-6301-42D9-8C58-25E699A21DBD")
    public static let ancsControlPoint = uuid("69D1D8F3-45E1-49A8-9821-9BBDFDAAD9D9")
    public static let ancsDataSource = uuid("22EAC6E9-24D6-4BB5-BE44-B36ACE7C7BFB")

    // Apple Media Service.
    public static let amsService = uuid("89D3502B-0F36-433A-8EF4-C502AD55F8DC")
    public static let amsRemoteCommand = uuid("9B3C81D8-57B1-4A8A-B8DF-0E56F7CA51C2")
    public static let amsEntityUpdate = uuid("2F7CABCE-808D-411F-9A0C-BB92BA96C102")
    public static let amsEntityAttribute = uuid("C6B2F38C-23AB-46D8-A6AB-A3A870BBD5D7")

    // Nordic UART Service. RX is written by the client, TX notifies it: named from the
    // peripheral's side, as Nordic does.
    public static let nordicUARTService = uuid("6E400001-B5A3-F393-E0A9-E50E24DCCA9E")
    public static let nordicUARTRX = uuid("6E400002-B5A3-F393-E0A9-E50E24DCCA9E")
    public static let nordicUARTTX = uuid("6E400003-B5A3-F393-E0A9-E50E24DCCA9E")

    static let entries: [BluetoothUUID: (kind: GATTNames.Kind, name: String)] = [
        ancsService: (.service, "Apple Notification Center Service"),
        ancsNotificationSource: (.characteristic, "ANCS Notification Source"),
        ancsControlPoint: (.characteristic, "ANCS Control Point"),
        ancsDataSource: (.characteristic, "ANCS Data Source"),
        amsService: (.service, "Apple Media Service"),
        amsRemoteCommand: (.characteristic, "AMS Remote Command"),
        amsEntityUpdate: (.characteristic, "AMS Entity Update"),
        amsEntityAttribute: (.characteristic, "AMS Entity Attribute"),
        nordicUARTService: (.service, "Nordic UART Service"),
        nordicUARTRX: (.characteristic, "Nordic UART RX"),
        nordicUARTTX: (.characteristic, "Nordic UART TX"),
    ]

    // The literals above are well formed; a typo would fail every name test at once.
    private static func uuid(_ text: String) -> BluetoothUUID {
        BluetoothUUID(text) ?? BluetoothUUID(high: 0, low: 0)
    }
}
