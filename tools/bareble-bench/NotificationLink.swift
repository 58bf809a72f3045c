import ATT
import BluetoothCore
import GATT
import Glibc
import HCI
import HCITransport
import L2CAP

/// One LE link to a fake peripheral on a socketpair, with BareBLE's real stack on the host
/// side: reader thread, H4 framer, driver, L2CAP, the ATT bearer and client, and the GATT
/// client for one notifying characteristic. The fake peripheral answers the MTU exchange and
/// CCCD writes; the benchmark subscribes and streams notifications.
struct NotificationLink {
    static let connectionHandle: UInt16 = 0x0040
    static let valueHandle: UInt16 = 0x0011
    static let mtu: UInt16 = 517

    let controller: StreamController
    let transport: DescriptorTransport
    let hci: HCIController
    let gatt: GATTClient
    let characteristic: GATTDatabase.Characteristic

    init() async throws {
        (controller, transport) = try StreamController.pair(acl: Self.answerATT)
        hci = HCIController(transport: transport)
        try hci.start()
        try await hci.powerOn()
        let manager = ChannelManager(controller: hci)
        let (connected, announce) = AsyncStream.makeStream(of: Void.self)
        manager.setConnectionHandler { event in
            if case .connected = event { announce.yield() }
        }
        controller.write(Self.connectionComplete)
        for await _ in connected { break }
        manager.setConnectionHandler(nil)
        let att = ATTClient(bearer: L2CAPBearer(manager: manager, connection: Self.connectionHandle))
        let agreed = try await att.exchangeMTU(clientRxMTU: Self.mtu)
        guard agreed == Self.mtu else { throw BenchError("MTU exchange agreed \(agreed), expected \(Self.mtu)") }
        gatt = GATTClient(att: att)
        characteristic = GATTDatabase.Characteristic(
            handle: Self.valueHandle - 1, properties: [.notify], valueHandle: Self.valueHandle,
            uuid: GATTUUID.heartRateMeasurement, endHandle: Self.valueHandle + 1,
            descriptors: [.init(handle: Self.valueHandle + 1, uuid: GATTUUID.clientCharacteristicConfiguration)])
    }

    /// We are the peripheral of this link: the fake controller reports a connection the
    /// "phone" made to us, as after connectable advertising (H4 LE Connection Complete).
    static let connectionComplete = connectionComplete(handle: connectionHandle)

    /// LE Connection Complete for `handle`, each handle its own central's address.
    static func connectionComplete(handle: UInt16) -> [UInt8] {
        [0x04] + HCIEvent.le(.connectionComplete(LEConnectionComplete(
            status: .success, connectionHandle: handle, role: .peripheral,
            peerAddressType: .random, peerAddress: BluetoothAddress(0xC44B_4D00_0001 + UInt64(handle - connectionHandle)),
            connectionInterval: 6, peripheralLatency: 0, supervisionTimeout: 100, centralClockAccuracy: 0))).encode()
    }

    /// The fake peripheral's ATT server: Exchange MTU and Write Request (the CCCD) only.
    private static func answerATT(_ packet: ACLDataPacket) -> [[UInt8]] {
        guard let frame = try? BasicFrame(decoding: packet.data), frame.channelID == .attributeProtocol,
              let request = try? ATTPDU(decoding: frame.payload) else { return [] }
        let response: ATTPDU
        switch request {
        case .exchangeMTURequest: response = .exchangeMTUResponse(.init(serverRxMTU: mtu))
        case .writeRequest: response = .writeResponse(.init())
        default: return []
        }
        return [aclFrame(response.encode())]
    }

    /// One H4 ACL frame carrying a whole ATT PDU on the ATT channel.
    static func aclFrame(_ pdu: [UInt8], handle: UInt16 = connectionHandle) -> [UInt8] {
        let l2cap = BasicFrame(channelID: .attributeProtocol, payload: pdu).encode()
        return [0x02] + ACLDataPacket(connectionHandle: handle, packetBoundary: .firstFlushable, data: l2cap).encode()
    }

    /// `count` Handle Value Notifications of `size` bytes each (the first four bytes count
    /// up), as one H4 byte stream of equal-sized frames.
    static func stream(count: Int, size: Int) -> (bytes: [UInt8], frameSize: Int) {
        var bytes: [UInt8] = []
        var frameSize = 0
        for index in 0..<count {
            var value = [UInt8](repeating: UInt8(truncatingIfNeeded: index), count: size)
            if size >= 4 { withUnsafeBytes(of: UInt32(truncatingIfNeeded: index).littleEndian) { value.replaceSubrange(0..<4, with: $0) } }
            let frame = aclFrame(ATTPDU.handleValueNotification(.init(attributeHandle: valueHandle, attributeValue: value)).encode())
            frameSize = frame.count
            bytes += frame
        }
        return (bytes, frameSize)
    }

    func finish() {
        hci.close()
        controller.close()
        transport.close()
    }
}
