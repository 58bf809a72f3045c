import BluetoothCore
import CBluetooth
import Glibc
import HCITransport

/// The kernel's Bluetooth management interface (the HCI control channel, "mgmt", that
/// bluetoothd speaks; BlueZ doc/mgmt-api.txt), for the few settings a host beside the
/// kernel needs without any daemon.
///
/// Why it is needed at all: the kernel registers its SMP channels only when an adapter is
/// powered on as a *managed* adapter (one that has seen a management command). An adapter
/// brought up with the plain HCIDEVUP ioctl connects LE links fine but answers every
/// BT_SECURITY request with "security requested but not available". ``powerOnManaged(index:)``
/// is the daemon-less power-on that makes the kernel's pairing work.
///
/// Each request is a command packet (opcode, index, length, parameters, all little
/// endian) answered by a Command Complete (0x0001) or Command Status (0x0002) event for
/// that opcode and index; other events on the channel are skipped. Every wait has a
/// deadline.
public enum KernelManagement {
    /// Command opcodes (mgmt-api.txt).
    enum Opcode {
        static let readControllerInformation: UInt16 = 0x0004
        static let setPowered: UInt16 = 0x0005
        static let setBondable: UInt16 = 0x0009
        static let setLowEnergy: UInt16 = 0x000D
        static let setIOCapability: UInt16 = 0x0018
        static let unpairDevice: UInt16 = 0x001B
        static let setSecureConnections: UInt16 = 0x002D
    }

    enum Event {
        static let commandComplete: UInt16 = 0x0001
        static let commandStatus: UInt16 = 0x0002
    }

    /// Current settings bits (mgmt-api.txt, Read Controller Information).
    public struct Settings: OptionSet, Sendable, Hashable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        public static let powered = Settings(rawValue: 1 << 0)
        public static let bondable = Settings(rawValue: 1 << 4)
        public static let lowEnergy = Settings(rawValue: 1 << 9)
        public static let secureConnections = Settings(rawValue: 1 << 11)
    }

    /// The adapter's current settings; also marks it as managed.
    public static func settings(index: Int, timeout: Duration = .seconds(5)) throws(TransportError) -> Settings {
        try information(index: index, timeout: timeout).current
    }

    /// The settings the adapter supports and those it has now (Read Controller Information).
    static func information(index: Int, timeout: Duration) throws(TransportError) -> (supported: Settings, current: Settings) {
        let reply = try request(Opcode.readControllerInformation, index: index, parameters: [], timeout: timeout)
        // Address (6), version (1), manufacturer (2), supported settings (4), current (4).
        guard reply.count >= 17 else {
            throw .system(spec: "mgmt", operation: .read, errno: EPROTO, message: "short Read Controller Information reply")
        }
        func settings(at offset: Int) -> Settings {
            Settings(rawValue: UInt32(reply[offset]) | UInt32(reply[offset + 1]) << 8 | UInt32(reply[offset + 2]) << 16 | UInt32(reply[offset + 3]) << 24)
        }
        return (settings(at: 9), settings(at: 13))
    }

    /// Powers hci`index` on as a managed adapter, with LE enabled: if it is up already
    /// (by HCIDEVUP, without the kernel's SMP), it is powered off and on again. Secure
    /// Connections is switched on where supported, as bluetoothd does by default.
    public static func powerOnManaged(index: Int, timeout: Duration = .seconds(10)) throws(TransportError) {
        let (supported, current) = try information(index: index, timeout: timeout)
        if current.contains(.powered) {
            _ = try request(Opcode.setPowered, index: index, parameters: [0], timeout: timeout)
        }
        if !current.contains(.lowEnergy) {
            _ = try request(Opcode.setLowEnergy, index: index, parameters: [1], timeout: timeout)
        }
        // Bondable: the kernel keeps the keys of a pairing for the link's next encryption.
        if !current.contains(.bondable) {
            _ = try request(Opcode.setBondable, index: index, parameters: [1], timeout: timeout)
        }
        // Without it the kernel pairs with legacy pairing only: no `fips` level, and
        // legacy keys are the weaker ones. (After LE: for an LE-only controller the kernel
        // allows it only with LE enabled.)
        if supported.contains(.secureConnections), !current.contains(.secureConnections) {
            _ = try request(Opcode.setSecureConnections, index: index, parameters: [1], timeout: timeout)
        }
        _ = try request(Opcode.setPowered, index: index, parameters: [1], timeout: timeout)
    }

    /// The IO capability the kernel's SMP declares for links made from now on (SMP's
    /// numbering: 0 display only ... 4 keyboard and display); the kernel copies it into
    /// each connection when the connection is made, so set it before connecting.
    public static func setIOCapability(index: Int, _ capability: UInt8, timeout: Duration = .seconds(5)) throws(TransportError) {
        _ = try request(Opcode.setIOCapability, index: index, parameters: [capability], timeout: timeout)
    }

    /// Makes the kernel forget its keys for `peer` on hci`index` (Unpair Device), so the
    /// next BT_SECURITY above `low` pairs afresh instead of encrypting with a key the
    /// peer may have lost; `disconnect` also ends a link to it. Without bluetoothd these
    /// keys live only in the kernel's memory. False when the kernel held none.
    @discardableResult
    public static func unpair(index: Int, peer: DeviceAddress, disconnect: Bool = false, timeout: Duration = .seconds(5)) throws(TransportError) -> Bool {
        // Address type as mgmt numbers it: 1 LE public, 2 LE random.
        let type: UInt8 = switch peer.type {
        case .public, .publicIdentity: 1
        case .random, .randomIdentity: 2
        }
        let parameters = peer.address.littleEndianBytes + [type, disconnect ? 1 : 0]
        let reply = try exchange(Opcode.unpairDevice, index: index, parameters: parameters, timeout: timeout)
        if reply.status == Status.notPaired { return false }
        try check(reply, Opcode.unpairDevice, index: index)
        return true
    }

    /// Sends one command and returns its Command Complete return parameters.
    static func request(_ opcode: UInt16, index: Int, parameters: [UInt8], timeout: Duration) throws(TransportError) -> [UInt8] {
        let reply = try exchange(opcode, index: index, parameters: parameters, timeout: timeout)
        try check(reply, opcode, index: index)
        return reply.parameters
    }

    /// A failed status as the error a caller can act on.
    static func check(_ reply: Reply, _ opcode: UInt16, index: Int) throws(TransportError) {
        guard reply.status == 0 else {
            if reply.status == Status.busy || reply.status == Status.rejected {
                throw .adapterBusy(index: index)
            }
            if reply.status == Status.invalidIndex {
                throw .system(spec: "mgmt hci\(index)", operation: .configure, errno: ENODEV,
                              message: "there is no adapter hci\(index) (`bareble-central adapters` lists them)")
            }
            throw .system(spec: "mgmt hci\(index)", operation: .configure, errno: EIO,
                          message: "management command 0x\(Hex.string([UInt8(opcode >> 8), UInt8(opcode & 0xFF)])) failed with status 0x\(Hex.string([reply.status]))")
        }
    }

    /// Sends one command and returns its Command Complete or Command Status, whatever
    /// its status.
    static func exchange(_ opcode: UInt16, index: Int, parameters: [UInt8], timeout: Duration) throws(TransportError) -> Reply {
        let spec = TransportSpec.hciRaw(index: index)
        let fd = try HCISocket.open(spec: spec)
        defer { Glibc.close(fd) }
        var address = sockaddr_hci()
        address.hci_family = sa_family_t(AF_BLUETOOTH)
        address.hci_dev = bareble_HCI_DEV_NONE()
        address.hci_channel = bareble_HCI_CHANNEL_CONTROL()
        let bound = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_hci>.size))
            }
        }
        guard bound == 0 else { throw TransportError.from(errno: errno, operation: .bind, spec: spec, context: .current()) }

        let packet = commandPacket(opcode, index: index, parameters: parameters)
        var written: Int
        repeat { written = Glibc.write(fd, packet, packet.count) } while written < 0 && errno == EINTR
        let code = errno
        // 0: the kernel refused the command before running it (an index with no adapter)
        // and left its Command Status on the socket, which says why.
        guard written == packet.count || written == 0 else {
            if written > 0 {
                throw .system(spec: "mgmt hci\(index)", operation: .write, errno: EIO, message: "short write (\(written) of \(packet.count) bytes)")
            }
            throw TransportError.from(errno: code, operation: .write, spec: spec)
        }

        let deadline = MonotonicClock.nanoseconds() &+ MonotonicClock.nanoseconds(in: timeout)
        var buffer = [UInt8](repeating: 0, count: 1024)
        while true {
            let revents = Posix.wait(fd, for: Int16(POLLIN), until: deadline)
            if revents == 0 {
                throw .timedOut(spec: "mgmt hci\(index)", waitingFor: "the answer to management command 0x\(Hex.string([UInt8(opcode >> 8), UInt8(opcode & 0xFF)]))", after: timeout)
            }
            if revents < 0 { throw TransportError.from(errno: -revents, operation: .read, spec: spec) }
            let count = Glibc.read(fd, &buffer, buffer.count)
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw TransportError.from(errno: errno, operation: .read, spec: spec)
            }
            guard let reply = try? Reply(decoding: Array(buffer[0..<count])),
                  reply.index == UInt16(truncatingIfNeeded: index), reply.commandOpcode == opcode
            else { continue }
            return reply
        }
    }

    /// A management command: opcode, index, parameter length (little endian), parameters.
    static func commandPacket(_ opcode: UInt16, index: Int, parameters: [UInt8]) -> [UInt8] {
        var writer = ByteWriter()
        writer.write(opcode)
        writer.write(UInt16(truncatingIfNeeded: index))
        writer.write(UInt16(parameters.count))
        writer.write(contentsOf: parameters)
        return writer.bytes
    }

    enum Status {
        static let notPaired: UInt8 = 0x06
        static let busy: UInt8 = 0x0A
        static let rejected: UInt8 = 0x0B
        static let invalidIndex: UInt8 = 0x11
    }

    /// A Command Complete or Command Status event: which command, its status, its return
    /// parameters.
    struct Reply {
        var index: UInt16
        var commandOpcode: UInt16
        var status: UInt8
        var parameters: [UInt8]

        init(decoding bytes: [UInt8]) throws(DecodeError) {
            var reader = ByteReader(bytes)
            let event = try reader.readUInt16()
            index = try reader.readUInt16()
            let length = Int(try reader.readUInt16())
            guard length == reader.remaining else { throw .lengthMismatch(declared: length, actual: reader.remaining) }
            guard event == Event.commandComplete || event == Event.commandStatus else {
                throw .invalidValue(field: "mgmt event", value: Int(event))
            }
            commandOpcode = try reader.readUInt16()
            status = try reader.readUInt8()
            parameters = Array(bytes[(bytes.count - reader.remaining)...])
        }
    }
}
