import BluetoothCore
import HCI
import HCITransport
import L2CAP
import Testing
import TestSupport

/// Our own host's two subscribers in the order the stack depends on: a connection made to
/// us reaches the Connector's acceptor on the reader thread, and the acceptor builds the
/// link's ATT channel on L2CAP at once (the facade's peripheral role), so L2CAP must know
/// the connection by then.
@Suite struct ControllerHostTests {
    /// What the acceptor saw when it set the ATT handler of the connection it was handed.
    static func acceptedLink(_ build: (HCIController) -> (ChannelManager, Connector)) async throws -> Result<Void, L2CAPError>? {
        let chip = TestChip(aclLength: 27, aclCount: 4, returnsCreditsAtOnce: true)
        let transport = ScriptedTransport { chip.answer($0) }
        let controller = HCIController(transport: transport)
        defer { controller.close() }
        try controller.start()
        let (channels, connector) = build(controller)
        try await controller.powerOn()
        let outcome = Lock<Result<Void, L2CAPError>?>(nil)
        let token = connector.setAcceptor { connection in
            let result = Result { () throws(L2CAPError) in
                _ = try channels.setHandler({ _ in }, channel: .attributeProtocol, connection: connection.handle)
            }
            outcome.withLock { $0 = result }
        }
        #expect(token != nil)
        transport.inject([HCIPacket(.event, L2CAPHarness.connectionComplete(0x0042, role: .peripheral).encode())])
        await transport.drain()
        return outcome.withLock { $0 }
    }

    @Test("the Connector's acceptor gets a connection L2CAP already serves: its ATT channel can be set at once")
    func acceptorFindsTheConnectionInL2CAP() async throws {
        let outcome = try await Self.acceptedLink { controller in
            let host = ControllerHost(controller: controller)
            return (host.channels, host.connector)
        }
        switch outcome {
        case .success?: break
        case let .failure(error)?: Issue.record("the acceptor could not build on L2CAP: \(error)")
        case nil: Issue.record("the acceptor was not called")
        }
    }

    /// Why ``ControllerHost`` owns the order: made the other way round (what its package-only
    /// Connector initializer keeps users from doing), the acceptor finds no connection in L2CAP.
    @Test("built Connector first, the acceptor runs before L2CAP knows the connection: unknownConnection")
    func theOtherOrderFails() async throws {
        let outcome = try await Self.acceptedLink { controller in
            let connector = Connector(controller: controller)
            return (ChannelManager(controller: controller), connector)
        }
        guard case .failure(.unknownConnection(handle: 0x0042))? = outcome else {
            Issue.record("expected unknownConnection(0x0042), got \(String(describing: outcome))")
            return
        }
    }
}
