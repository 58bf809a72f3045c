import BluetoothCore
import CBluetooth
import Glibc

/// One Bluetooth adapter the kernel knows (hciN).
public struct AdapterInfo: Sendable, Hashable, CustomStringConvertible {
    public var index: Int
    /// The kernel's name, "hci0".
    public var name: String
    public var address: BluetoothAddress
    public var isUp: Bool
    public var bus: Bus
    /// Primary (BR/EDR and LE) or AMP.
    public var isPrimary: Bool

    public init(index: Int, name: String, address: BluetoothAddress, isUp: Bool, bus: Bus, isPrimary: Bool = true) {
        self.index = index
        self.name = name
        self.address = address
        self.isUp = isUp
        self.bus = bus
        self.isPrimary = isPrimary
    }

    /// How the controller is attached (HCI_USB, HCI_UART, ... in hci.h).
    public enum Bus: Sendable, Hashable, CustomStringConvertible {
        case virtual, usb, pcCard, uart, rs232, pci, sdio, spi, i2c, smd, virtio
        case other(Int)

        init(kernelValue: Int32) {
            switch kernelValue {
            case HCI_VIRTUAL: self = .virtual
            case HCI_USB: self = .usb
            case HCI_PCCARD: self = .pcCard
            case HCI_UART: self = .uart
            case HCI_RS232: self = .rs232
            case HCI_PCI: self = .pci
            case HCI_SDIO: self = .sdio
            case HCI_SPI: self = .spi
            case HCI_I2C: self = .i2c
            case HCI_SMD: self = .smd
            case HCI_VIRTIO: self = .virtio
            default: self = .other(Int(kernelValue))
            }
        }

        public var description: String {
            switch self {
            case .virtual: "virtual"
            case .usb: "USB"
            case .pcCard: "PC Card"
            case .uart: "UART"
            case .rs232: "RS-232"
            case .pci: "PCI"
            case .sdio: "SDIO"
            case .spi: "SPI"
            case .i2c: "I2C"
            case .smd: "SMD"
            case .virtio: "virtio"
            case let .other(value): "bus \(value)"
            }
        }
    }

    public var description: String {
        "\(name) \(address) \(isUp ? "up" : "down") \(bus)\(isPrimary ? "" : " AMP")"
    }
}

/// Lists adapters and brings them up or down (HCIGETDEVLIST, HCIGETDEVINFO, HCIDEVUP,
/// HCIDEVDOWN on an unbound HCI socket).
public enum Adapters {
    public static func list() throws(TransportError) -> [AdapterInfo] {
        let fd = try HCISocket.open(spec: nil)
        defer { Glibc.close(fd) }
        let maximum = Int(bareble_HCI_MAX_DEV())
        var requests = [hci_dev_req](repeating: hci_dev_req(), count: maximum)
        let count = bareble_hci_get_dev_list(fd, &requests, Int32(maximum))
        guard count >= 0 else { throw TransportError.from(errno: errno, operation: .deviceList, spec: nil) }
        var adapters: [AdapterInfo] = []
        for request in requests.prefix(Int(count)) {
            var info = hci_dev_info()
            info.dev_id = request.dev_id
            // An adapter can vanish between the two calls; list the ones still there.
            guard bareble_ioctl_ptr(fd, bareble_HCIGETDEVINFO(), &info) == 0 else { continue }
            adapters.append(adapter(from: info))
        }
        return adapters
    }

    /// HCIDEVUP; an adapter that is already up is fine.
    public static func bringUp(index: Int) throws(TransportError) {
        try deviceControl(index: index, request: bareble_HCIDEVUP(), operation: .deviceUp, alreadyDone: EALREADY)
    }

    /// HCIDEVDOWN; an adapter that is already down is fine.
    public static func bringDown(index: Int) throws(TransportError) {
        try deviceControl(index: index, request: bareble_HCIDEVDOWN(), operation: .deviceDown, alreadyDone: EALREADY)
    }

    private static func deviceControl(
        index: Int, request: UInt, operation: TransportOperation, alreadyDone: Int32
    ) throws(TransportError) {
        let spec = TransportSpec.hciRaw(index: index)
        let fd = try HCISocket.open(spec: spec)
        defer { Glibc.close(fd) }
        guard bareble_ioctl_int(fd, request, Int32(index)) == 0 else {
            let code = errno
            if code == alreadyDone { return }
            throw TransportError.from(errno: code, operation: operation, spec: spec, context: .current())
        }
    }

    private static func adapter(from info: hci_dev_info) -> AdapterInfo {
        var info = info
        let name = withUnsafeBytes(of: &info.name) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        let addressBytes = withUnsafeBytes(of: &info.bdaddr) { Array($0) }
        let address = (try? BluetoothAddress(littleEndian: addressBytes)) ?? .zero
        return AdapterInfo(
            index: Int(info.dev_id),
            name: name,
            address: address,
            isUp: bareble_hci_dev_info_is_up(&info) != 0,
            bus: AdapterInfo.Bus(kernelValue: bareble_hci_dev_info_bus(&info)),
            isPrimary: bareble_hci_dev_info_controller_type(&info) == HCI_PRIMARY
        )
    }
}
