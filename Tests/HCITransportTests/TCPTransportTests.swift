import BluetoothCore
import Glibc
import Testing
@testable import HCITransport
import TestSupport

/// A loopback listener that plays the controller.
final class FakeControllerListener {
    let listener: Int32
    let port: Int

    init() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.listener = listener
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(listener, pointer, length) == 0 && listen(listener, 4) == 0
                    && getsockname(listener, pointer, &length) == 0
            }
        }
        #expect(bound)
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    func accept() -> Int32 { Glibc.accept(listener, nil, nil) }

    deinit { close(listener) }
}

@Suite struct TCPTransportTests {
    @Test func packetsBothWaysAndCloseFromFarSide() throws {
        let listener = try FakeControllerListener()
        let transport = try TCPTransport.connect(host: "127.0.0.1", port: listener.port)
        let controller = listener.accept()
        #expect(controller >= 0)
        #expect(transport.name == "tcp:127.0.0.1:\(listener.port)")

        let received = Inbox<HCIPacket>()
        let closes = Inbox<TransportError?>()
        try transport.start(receive: { received.put($0) }, closed: { closes.put($0) })

        writeAll(controller, stream(Samples.fromController))
        #expect(received.wait(for: Samples.fromController.count) == Samples.fromController)

        try transport.send(Samples.reset)
        try transport.send(Samples.acl)
        #expect(readExactly(controller, 4 + Samples.acl.h4Bytes.count) == Samples.reset.h4Bytes + Samples.acl.h4Bytes)

        close(controller)
        let closeCalls = closes.wait(for: 1)
        #expect(closeCalls.count == 1)
        #expect(closeCalls.first == .some(nil))
        transport.close()
        transport.close()
        #expect(closes.snapshot.count == 1)
        #expect(throws: TransportError.notOpen(spec: transport.name)) { try transport.send(Samples.reset) }
    }

    @Test func closeFromOurSideCallsClosedOnceAndJoins() throws {
        let listener = try FakeControllerListener()
        let transport = try TCPTransport.connect(host: "127.0.0.1", port: listener.port)
        let controller = listener.accept()
        defer { close(controller) }
        let closes = Inbox<TransportError?>()
        try transport.start(receive: { _ in }, closed: { closes.put($0) })
        #expect(throws: TransportError.alreadyStarted(spec: transport.name)) {
            try transport.start(receive: { _ in }, closed: { _ in })
        }
        transport.close()
        #expect(closes.snapshot.count == 1)  // joined: already called when close returns
        #expect(closes.snapshot.first == .some(nil))
        #expect(readExactly(controller, 1).isEmpty)  // far side sees end of file
    }

    @Test func closeFromTheReceiveCallbackDoesNotDeadlock() throws {
        let listener = try FakeControllerListener()
        let transport = try TCPTransport.connect(host: "127.0.0.1", port: listener.port)
        let controller = listener.accept()
        defer { close(controller) }
        let closes = Inbox<TransportError?>()
        let received = Inbox<HCIPacket>()
        try transport.start(receive: { packet in
            received.put(packet)
            transport.close()
        }, closed: { closes.put($0) })
        writeAll(controller, stream([Samples.resetComplete, Samples.commandStatus]))
        #expect(closes.wait(for: 1).count == 1)
        #expect(received.snapshot == [Samples.resetComplete])
    }

    @Test func connectionRefusedSaysWhatToDo() throws {
        let port: Int
        do {
            let listener = try FakeControllerListener()
            port = listener.port
        }
        #expect(throws: TransportError.connectionRefused(host: "127.0.0.1", port: port)) {
            try TCPTransport.connect(host: "127.0.0.1", port: port)
        }
        let text = TransportError.connectionRefused(host: "127.0.0.1", port: port).description
        #expect(text == "tcp:127.0.0.1:\(port): connection refused: is the controller (or the virtual radio) listening on port \(port)?")
    }

    @Test func unknownHost() {
        #expect {
            try TCPTransport.connect(host: "no-such-host.invalid", port: 1)
        } throws: { error in
            guard case .hostNotFound = error as? TransportError else { return false }
            return true
        }
    }
}
