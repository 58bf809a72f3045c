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
    /// A program holds the adapter through the HCI user channel (`hci:N`, bluetoothd in
    /// some setups, another BareBLE): nobody else can use it until that program lets go.
    /// The kernel reports such an adapter as up: it is, for that program.
    public var isHeld: Bool

    public init(index: Int, name: String, address: BluetoothAddress, isUp: Bool, bus: Bus, isPrimary: Bool = true, isHeld: Bool = false) {
        self.index = index
        self.name = name
        self.address = address
        self.isUp = isUp
        self.bus = bus
        self.isPrimary = isPrimary
        self.isHeld = isHeld
    }

    /// "up", "down", or "held by another program (user channel)".
    public var state: String {
        isHeld ? "held by another program (user channel)" : isUp ? "up" : "down"
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
        "\(name) \(address) \(state) \(bus)\(isPrimary ? "" : " AMP")"
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
            var adapter = adapter(from: info)
            // A user channel brings the adapter up for itself, so "up" alone says nothing.
            adapter.isHeld = isHeldByUserChannel(index: adapter.index)
            adapters.append(adapter)
        }
        return adapters
    }

    /// Whether a user channel holds hci`index` (see ``AdapterInfo/isHeld``); false when it
    /// cannot be told.
    public static func isHeldByUserChannel(index: Int) -> Bool {
        let spec = TransportSpec.hciRaw(index: index)
        guard let fd = try? HCISocket.open(spec: spec) else { return false }
        // bind closes the descriptor when it fails.
        guard (try? HCISocket.bind(fd, index: index, channel: bareble_HCI_CHANNEL_RAW(), spec: spec)) != nil else { return false }
        defer { Glibc.close(fd) }
        return bareble_hci_held_by_user_channel(fd) == 1
    }

    /// HCIDEVUP; an adapter that is already up is fine. A held adapter fails with
    /// ``TransportError/adapterBusy(index:)``.
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
