import BluetoothCore

/// Apple Notification Center Service (Apple's ANCS specification, "Specification"):
/// the iPhone is the GATT server, the accessory subscribes.
public enum ANCSUUID {
    public static let service = BluetoothUUID(high: 0x7905_F431_B5CE_4E99, low: 0xA40F_4B1E_122D_00D0)
    /// Notify: one 8-octet event per notification added, modified or removed.
    public static let notificationSource = BluetoothUUID(high: 0x9FBF_120D_6301_42D9, low: 0x8C58_25E6_99A2_1DBD)
    /// Write with response: Get Notification/App Attributes, Perform Notification Action.
    public static let controlPoint = BluetoothUUID(high: 0x69D1_D8F3_45E1_49A8, low: 0x9821_9BBD_FDAA_D9D9)
    /// Notify: the answers to Control Point commands, split at the MTU with no header repeated.
    public static let dataSource = BluetoothUUID(high: 0x22EA_C6E9_24D6_4BB5, low: 0xBE44_B36A_CE7C_7BFB)
}

/// Apple Media Service (Apple's AMS specification): now-playing and remote commands over
/// the same link as ANCS.
public enum AMSUUID {
    public static let service = BluetoothUUID(high: 0x89D3_502B_0F36_433A, low: 0x8EF4_C502_AD55_F8DC)
    /// Write a command ID; notifies the list of commands the media app supports now.
    public static let remoteCommand = BluetoothUUID(high: 0x9B3C_81D8_57B1_4A8A, low: 0xB8DF_0E56_F7CA_51C2)
    /// Write the attributes to follow; notifies their values as they change.
    public static let entityUpdate = BluetoothUUID(high: 0x2F7C_ABCE_808D_411F, low: 0x9A0C_BB92_BA96_C102)
    /// Write an entity and attribute, then read its whole value (when an update came truncated).
    public static let entityAttribute = BluetoothUUID(high: 0xC6B2_F38C_23AB_46D8, low: 0xA6AB_A3A8_70BB_D5D7)
}
