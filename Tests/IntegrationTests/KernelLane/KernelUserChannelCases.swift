import ATT
import BluetoothCore
import Foundation
import GATT
import HCI
import HCITransport
import L2CAP
import Testing
import TestSupport

/// hci:N, the full userspace mode, in the lane's guest: the kernel lets go of hci0 and
/// BareBLE is the whole host (bring-up, scan, our Connector, L2CAP, ATT, GATT).
enum KernelUserChannelCases {
    static func gatt() async throws {
        let controller = HCIController(transport: try HCISocketTransport.openUserChannel(index: 0))
        defer { controller.close() }
        try controller.start()
        let manager = ChannelManager(controller: controller)
        let info = try await controller.powerOn()
        try #require(info.address == KernelGuest.hci0Address)

        let scanner = Scanner(controller: controller)
        let (found, continuation) = AsyncStream.makeStream(of: Advertisement.self)
        let session = try await scanner.scan { advertisement in
            if advertisement.address == KernelGuest.peripheral { continuation.yield(advertisement) }
        }
        let advertisement = try await firstElement(of: found, within: KernelRawCases.scanTimeout, waitingFor: "the peripheral's advertisement on hci:0")
        try #require(advertisement.localName == "BareBLE-HRM")
        await session.stop()

        // L2CAP learns of the link from the same event as the Connector, in no set order:
        // the bearer may only start once L2CAP has it too.
        let (links, linkContinuation) = AsyncStream.makeStream(of: UInt16.self)
        manager.setConnectionHandler { event in
            if case let .connected(link) = event { linkContinuation.yield(link.handle) }
        }
        // The connector must live as long as its connections: it feeds them their events.
        let connector = Connector(controller: controller)
        let connection = try await connector.connect(to: KernelGuest.peripheral, timeout: .seconds(30))
        if manager.connection(connection.handle) == nil {
            _ = try await firstElement(of: links, within: .seconds(5), waitingFor: "L2CAP to see the connection")
        }
        let bearer = L2CAPBearer(manager: manager, connection: connection.handle) { reason in
            try? await connection.disconnect(reason: reason)
        }
        let att = ATTClient(bearer: bearer)
        let mtu = try await att.exchangeMTU()
        try #require(mtu > 23, "ATT_MTU \(mtu)")
        try await KernelRawCases.exploreWriteAndSubscribe(GATTClient(att: att))
        let seen = Lock<[String]>([])
        let subscription = controller.subscribe { event in
            if case .disconnectionComplete = event { seen.withLock { $0.append("\(event)") } }
        }
        defer { subscription.cancel() }
        do {
            try await connection.disconnect()
        } catch {
            throw KernelCaseFailure("\(error); Disconnection Complete events the driver saw: \(seen.withLock { $0 }); connected \(connection.isConnected)")
        }
        try #require(controller.statistics.malformedEvents == 0)
        try #require(connector.connections.isEmpty)
    }

    /// While our user channel holds hci0, a second opener is told who holds it and what to
    /// do, and the adapter list says so.
    static func heldByAnother() async throws {
        let holder = try HCISocketTransport.openUserChannel(index: 0)
        defer { holder.close() }
        do {
            let second = try HCISocketTransport.openUserChannel(index: 0)
            second.close()
            throw KernelCaseFailure("a second user channel on hci0 opened")
        } catch let error as TransportError {
            try #require(error == .adapterBusy(index: 0), "\(error)")
            try #require(error.description.contains("hci0 is held by another program"), "\(error.description)")
        }
        let hci0 = try #require(try Adapters.list().first { $0.index == 0 })
        try #require(hci0.isHeld, "the adapter list shows hci0 held: \(hci0)")
        try #require(hci0.description.contains("held"), "\(hci0.description)")
        holder.close()
        let released = try #require(try Adapters.list().first { $0.index == 0 })
        try #require(!released.isHeld, "released: \(released)")
    }
}
