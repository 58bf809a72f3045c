import BluetoothCore
import GATT
import Testing

@Suite struct GATTNamesTests {
    private func uuid(_ text: String) -> BluetoothUUID { BluetoothUUID(text)! }

    @Test(arguments: [
        ("1800", "Generic Access"), ("1801", "Generic Attribute"), ("180A", "Device Information"),
        ("180D", "Heart Rate"), ("180F", "Battery"), ("1812", "Human Interface Device"),
        ("1859", "Mesh Proxy Solicitation"),
    ])
    func namesServices(_ text: String, _ name: String) {
        #expect(GATTNames.service(for: uuid(text)) == name)
    }

    @Test(arguments: [
        ("2A00", "Device Name"), ("2A01", "Appearance"), ("2A05", "Service Changed"),
        ("2A19", "Battery Level"), ("2A29", "Manufacturer Name String"), ("2A37", "Heart Rate Measurement"),
        ("2A38", "Body Sensor Location"), ("2A50", "PnP ID"), ("2B29", "Client Supported Features"),
        ("2B2A", "Database Hash"), ("2C1A", "Coordinated Set Name"),
    ])
    func namesCharacteristics(_ text: String, _ name: String) {
        #expect(GATTNames.characteristic(for: uuid(text)) == name)
    }

    @Test(arguments: [
        ("2900", "Characteristic Extended Properties"), ("2901", "Characteristic User Description"),
        ("2902", "Client Characteristic Configuration"), ("2904", "Characteristic Presentation Format"),
        ("2908", "Report Reference"),
    ])
    func namesDescriptors(_ text: String, _ name: String) {
        #expect(GATTNames.descriptor(for: uuid(text)) == name)
    }

    @Test func namesDeclarationsAndUnits() {
        #expect(GATTNames.declaration(for: GATTUUID.primaryService) == "Primary Service")
        #expect(GATTNames.declaration(for: GATTUUID.secondaryService) == "Secondary Service")
        #expect(GATTNames.declaration(for: GATTUUID.include) == "Include")
        #expect(GATTNames.declaration(for: GATTUUID.characteristicDeclaration) == "Characteristic")
        #expect(GATTNames.unit(for: uuid("27AD")) == "percentage")
        #expect(GATTNames.unit(for: uuid("272F")) == "Celsius temperature (degree Celsius)")
    }

    @Test func namesOnlyTheirOwnKind() {
        #expect(GATTNames.service(for: GATTUUID.batteryLevel) == nil)
        #expect(GATTNames.characteristic(for: GATTUUID.battery) == nil)
        #expect(GATTNames.descriptor(for: GATTUUID.primaryService) == nil)
        #expect(GATTNames.name(for: GATTUUID.batteryLevel) == "Battery Level")
        #expect(GATTNames.kind(of: GATTUUID.clientCharacteristicConfiguration) == .descriptor)
    }

    @Test func unknownUUIDsHaveNoName() {
        #expect(GATTNames.service(for: uuid("18FF")) == nil)
        #expect(GATTNames.name(for: uuid("FFFF")) == nil)
        #expect(GATTNames.name(for: uuid("0000180D")) == "Heart Rate")
        #expect(GATTNames.name(for: uuid("12345678")) == nil)
        #expect(GATTNames.name(for: uuid("00000000-0000-0000-0000-000000000001")) == nil)
    }

    @Test func namesVendorServices() {
        #expect(GATTNames.service(for: uuid("7905F431-B5CE-4E99-A40F-4B1E122D00D0")) == "Apple Notification Center Service")
        #expect(GATTNames.characteristic(for: uuid("9FBF120D-6301-42D9-8C58-25E699A21DBD")) == "ANCS Notification Source")
        #expect(GATTNames.characteristic(for: uuid("69d1d8f3-45e1-49a8-9821-9bbdfdaad9d9")) == "ANCS Control Point")
        #expect(GATTNames.characteristic(for: uuid("22EAC6E9-24D6-4BB5-BE44-B36ACE7C7BFB")) == "ANCS Data Source")
        #expect(GATTNames.service(for: uuid("89D3502B-0F36-433A-8EF4-C502AD55F8DC")) == "Apple Media Service")
        #expect(GATTNames.service(for: uuid("6E400001-B5A3-F393-E0A9-E50E24DCCA9E")) == "Nordic UART Service")
        #expect(GATTNames.characteristic(for: VendorGATTNames.nordicUARTRX) == "Nordic UART RX")
        #expect(GATTNames.characteristic(for: VendorGATTNames.nordicUARTTX) == "Nordic UART TX")
        #expect(GATTNames.service(for: VendorGATTNames.ancsDataSource) == nil)
    }

    @Test func tableCoversEachKind() {
        #expect(GATTNames.allAssigned(.service).count >= 60)
        #expect(GATTNames.allAssigned(.characteristic).count >= 400)
        #expect(GATTNames.allAssigned(.descriptor).count >= 15)
        #expect(GATTNames.allAssigned(.declaration) == [0x2800, 0x2801, 0x2802, 0x2803])
        #expect(GATTNames.allAssigned(.unit).count >= 100)
        // Every entry sits in its kind's SIG range.
        #expect(GATTNames.allAssigned(.service).allSatisfy { (0x1800...0x18FF).contains($0) })
        #expect(GATTNames.allAssigned(.characteristic).allSatisfy { (0x2A00...0x2CFF).contains($0) })
        #expect(GATTNames.allAssigned(.descriptor).allSatisfy { (0x2900...0x29FF).contains($0) })
    }
}
