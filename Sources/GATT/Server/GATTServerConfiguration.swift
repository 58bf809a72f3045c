import ATT

/// What our server puts in the GAP and GATT services it adds itself (Core 5.4 Vol 3 Part C
/// 12, Part G 7).
public struct GATTServerConfiguration: Sendable, Hashable {
    /// Device Name (0x2A00), UTF-8, read only.
    public var deviceName: String
    /// Appearance (0x2A01), read only (Supplement Part A 1.12 for the values).
    public var appearance: UInt16
    /// Central Address Resolution (0x2AA6): nil leaves the characteristic out; true says
    /// this device resolves peers' private addresses in directed advertising (Part C 12.4).
    public var centralAddressResolution: Bool?
    /// Server Supported Features (0x2B3A): served only when a feature is set (Part G 7.4
    /// makes the characteristic mandatory only for a server that supports one), so a
    /// server without EATT lays out GATT as Bumble, Zephyr and BlueZ do, and a cloned
    /// database keeps every handle of the original.
    public var serverSupportedFeatures: GATTServerSupportedFeatures
    /// How long an application handler may take to answer a read or write before the
    /// client is answered Unlikely Error (0x0E). Well under the client's 30 s transaction
    /// timeout (Vol 3 Part F 3.3.3), after which the client drops the link.
    public var handlerDeadline: Duration

    public init(
        deviceName: String = "BareBLE", appearance: UInt16 = 0, centralAddressResolution: Bool? = nil,
        serverSupportedFeatures: GATTServerSupportedFeatures = [], handlerDeadline: Duration = .seconds(10)
    ) {
        self.deviceName = deviceName
        self.appearance = appearance
        self.centralAddressResolution = centralAddressResolution
        self.serverSupportedFeatures = serverSupportedFeatures
        self.handlerDeadline = handlerDeadline
    }
}

extension GATTServerConfiguration {
    /// The GAP (Part C 12) and GATT (Part G 7) services our server starts with, before the
    /// application's: handles 0x0001 onwards, the same on every run with one configuration.
    var builtInServices: [GATTDatabase.Service] {
        typealias Characteristic = GATTDatabase.Characteristic
        var access = [
            Characteristic(uuid: GATTUUID.deviceName, properties: [.read], value: Array(deviceName.utf8.prefix(248))),
            Characteristic(uuid: GATTUUID.appearance, properties: [.read], value: [UInt8(appearance & 0xFF), UInt8(appearance >> 8)]),
        ]
        if let centralAddressResolution {
            access.append(Characteristic(uuid: GATTUUID.centralAddressResolution, properties: [.read], value: [centralAddressResolution ? 1 : 0]))
        }
        var attribute = [
            // Not readable: its value only travels in indications (Part G 7.1).
            Characteristic(uuid: GATTUUID.serviceChanged, properties: [.indicate], permissions: ATTPermissions()),
            Characteristic(uuid: GATTUUID.clientSupportedFeatures, properties: [.read, .write]),
            Characteristic(uuid: GATTUUID.databaseHash, properties: [.read]),
        ]
        if !serverSupportedFeatures.isEmpty {
            attribute.append(Characteristic(uuid: GATTUUID.serverSupportedFeatures, properties: [.read], value: [serverSupportedFeatures.rawValue]))
        }
        return [
            GATTDatabase.Service(uuid: GATTUUID.genericAccess, characteristics: access),
            GATTDatabase.Service(uuid: GATTUUID.genericAttribute, characteristics: attribute),
        ]
    }
}
