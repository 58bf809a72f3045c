import BluetoothCore
@testable import HCI
import L2CAP
import Testing
import TestSupport

/// Conversations on the LE signaling channel, one scripted exchange per case.
@Suite struct SignalingTests {
    static let goodRequest = ConnectionParameterUpdateRequest(intervalMin: 24, intervalMax: 40, peripheralLatency: 4, timeoutMultiplier: 600)

    @Test func centralAcceptsAValidRequestThenUpdatesTheConnection() async throws {
        let harness = try await L2CAPHarness.make()
        await harness.connect(0x40, role: .central)
        await harness.receiveSignaling(SignalingCommand(identifier: 0x21, Self.goodRequest), handle: 0x40)
        let response = try await harness.nextSignaling(handle: 0x40)
        #expect(response.encode() == [0x13, 0x21, 0x02, 0x00, 0x00, 0x00])
        let command = try await harness.log.next("LE Connection Update")
        #expect(command.type == .command)
        #expect(command.bytes == [
            0x13, 0x20, 14,  // opcode 0x2013, 14 parameter bytes
            0x40, 0x00,      // handle
            24, 0x00, 40, 0x00, 4, 0x00, 0x58, 0x02, // interval min/max, latency, timeout 600
            0x00, 0x00, 0x00, 0x00,  // CE lengths
        ])
        #expect(harness.manager.statistics.connectionParameterUpdatesAccepted == 1)
    }

    @Test(arguments: [
        ConnectionParameterUpdateRequest(intervalMin: 5, intervalMax: 40, peripheralLatency: 0, timeoutMultiplier: 600),
        ConnectionParameterUpdateRequest(intervalMin: 40, intervalMax: 24, peripheralLatency: 0, timeoutMultiplier: 600),
        ConnectionParameterUpdateRequest(intervalMin: 24, intervalMax: 40, peripheralLatency: 500, timeoutMultiplier: 3200),
        ConnectionParameterUpdateRequest(intervalMin: 24, intervalMax: 40, peripheralLatency: 0, timeoutMultiplier: 9),
        ConnectionParameterUpdateRequest(intervalMin: 24, intervalMax: 40, peripheralLatency: 4, timeoutMultiplier: 50), // 500 ms is not more than 5 x 50 ms x 2
    ])
    func centralRejectsInvalidParametersAndSendsNoCommand(request: ConnectionParameterUpdateRequest) async throws {
        let harness = try await L2CAPHarness.make()
        await harness.connect(0x40, role: .central)
        await harness.receiveSignaling(SignalingCommand(identifier: 0x05, request), handle: 0x40)
        #expect(try await harness.nextSignaling(handle: 0x40).encode() == [0x13, 0x05, 0x02, 0x00, 0x01, 0x00])
        // The next thing on the wire answers the next command: no LE Connection Update
        // slipped in between.
        await harness.receiveSignaling(SignalingCommand(code: SignalingCode(rawValue: 0x7F), identifier: 0x06, data: []), handle: 0x40)
        let next = try await harness.log.next()
        #expect(next.type == .acl)
        #expect(harness.manager.statistics.connectionParameterUpdatesRejected == 1)
    }

    @Test func thePolicyDecidesValidRequests() async throws {
        let configuration = ChannelManager.Configuration(connectionParameterUpdatePolicy: { connection, request in
            connection.handle == 0x40 && request.peripheralLatency == 0
        })
        let harness = try await L2CAPHarness.make(configuration: configuration)
        await harness.connect(0x40, role: .central)
        await harness.receiveSignaling(SignalingCommand(identifier: 9, Self.goodRequest), handle: 0x40)
        #expect(try await harness.nextSignaling(handle: 0x40).decode(ConnectionParameterUpdateResponse.self).result == .rejected)
    }

    /// A peer repeating a valid Connection Parameter Update Request while the controller has
    /// not yet taken our LE Connection Update: each acceptance would queue one more HCI
    /// command (and a task), so only one update runs per connection and the rest are
    /// answered "rejected".
    @Test func requestsWhileAnUpdateIsUnderwayAreRejectedAndQueueNoCommand() async throws {
        let harness = try await L2CAPHarness.make(returnsCreditsAtOnce: true)
        // The controller never answers LE Connection Update, so it stays underway.
        harness.transport.setResponder { packet in
            packet.type == .command && packet.bytes.starts(with: [0x13, 0x20]) ? [] : harness.chip.answer(packet)
        }
        await harness.connect(0x40, role: .central)
        // In one batch, well inside the 5 s in which the command would time out, and fewer
        // than the 32 answers L2CAP queues at once.
        await harness.inject((1...UInt8(30)).map { identifier in
            ACLDataPacket(connectionHandle: 0x40, packetBoundary: .firstFlushable, data: BasicFrame(
                channelID: .leSignaling, payload: SignalingCommand(identifier: identifier, Self.goodRequest).encode()).encode())
        })
        var results: [ConnectionParameterUpdateResponse.Result] = []
        while results.count < 30 {
            let packet = try await harness.log.next()
            guard packet.type == .acl else { continue }
            let frame = try BasicFrame(decoding: try ACLDataPacket(decoding: packet.bytes).data)
            results.append(try SignalingCommand(decoding: frame.payload).decode(ConnectionParameterUpdateResponse.self).result)
        }
        #expect(results.first == .accepted)
        #expect(results.dropFirst().allSatisfy { $0 == .rejected })
        // What went to the controller, not what is still pending: under load the unanswered
        // command may reach its 5 s deadline before this line runs. The accepted update's
        // command goes out from its own task, which the answers may overtake.
        let updates: @Sendable () -> Int = { harness.transport.sent.filter { $0.type == .command && $0.bytes.starts(with: [0x13, 0x20]) }.count }
        try await waitUntil { updates() >= 1 }
        #expect(updates() == 1)
        #expect(harness.manager.statistics.connectionParameterUpdatesRefusedWhileUpdating == 29)
    }

    @Test func aPeripheralRejectsTheRequestAsNotUnderstood() async throws {
        let harness = try await L2CAPHarness.make()
        await harness.connect(0x40, role: .peripheral)
        await harness.receiveSignaling(SignalingCommand(identifier: 0x33, Self.goodRequest), handle: 0x40)
        #expect(try await harness.nextSignaling(handle: 0x40).encode() == [0x01, 0x33, 0x02, 0x00, 0x00, 0x00])
    }

    @Test func unknownCodesAndCreditBasedRequestsAreRejected() async throws {
        let harness = try await L2CAPHarness.make()
        await harness.connect(0x40)
        for (code, identifier) in [(UInt8(0x7F), UInt8(0x11)), (0x14, 0x12), (0x17, 0x13), (0x19, 0x14), (0x02, 0x15)] {
            await harness.receiveSignaling(SignalingCommand(code: SignalingCode(rawValue: code), identifier: identifier, data: [1, 2]), handle: 0x40)
            let reject = try await harness.nextSignaling(handle: 0x40)
            #expect(reject == SignalingCommand(identifier: identifier, CommandReject.commandNotUnderstood))
        }
        #expect(harness.manager.statistics.commandRejectsSent == 5)
    }

    @Test func aDisconnectionRequestNamesTheInvalidChannel() async throws {
        let harness = try await L2CAPHarness.make()
        await harness.connect(0x40)
        let request = DisconnectionRequest(destinationCID: ChannelIdentifier(0x0040), sourceCID: ChannelIdentifier(0x0077))
        await harness.receiveSignaling(SignalingCommand(identifier: 3, request), handle: 0x40)
        let reject = try await harness.nextSignaling(handle: 0x40)
        #expect(try reject.decode(CommandReject.self) == .invalidCIDInRequest(localCID: ChannelIdentifier(0x0040), remoteCID: ChannelIdentifier(0x0077)))
    }

    @Test func aCommandOverTheSignalingMTUIsRejectedWithOurMTU() async throws {
        let harness = try await L2CAPHarness.make()
        await harness.connect(0x40)
        await harness.receiveSignaling(SignalingCommand(code: .leCreditBasedConnectionRequest, identifier: 0x44, data: Array(repeating: 0, count: 20)), handle: 0x40)
        #expect(try await harness.nextSignaling(handle: 0x40).encode() == [0x01, 0x44, 0x04, 0x00, 0x01, 0x00, 23, 0x00])
        #expect(harness.manager.statistics.oversizedPDUs == 1)
    }

    @Test func malformedAndUnexpectedCommandsAreCountedNotAnsweredWrongly() async throws {
        let harness = try await L2CAPHarness.make()
        await harness.connect(0x40)
        // Responses and indications nobody asked for: dropped, counted, not answered.
        await harness.receiveSignaling(SignalingCommand(identifier: 1, ConnectionParameterUpdateResponse(result: .accepted)), handle: 0x40)
        await harness.receiveSignaling(SignalingCommand(identifier: 2, CommandReject.commandNotUnderstood), handle: 0x40)
        await harness.receiveSignaling(SignalingCommand(code: .flowControlCreditIndication, identifier: 3, data: [0x40, 0, 1, 0]), handle: 0x40)
        // Identifier 0 is illegal: dropped silently.
        await harness.receiveSignaling(SignalingCommand(code: SignalingCode(rawValue: 0x7F), identifier: 0, data: []), handle: 0x40)
        // A length field that disagrees: the request is recognisable, so it is answered.
        await harness.receive([0x12, 0x09, 0x08, 0x00, 0x06], cid: .leSignaling, handle: 0x40)
        #expect(try await harness.nextSignaling(handle: 0x40) == SignalingCommand(identifier: 9, CommandReject.commandNotUnderstood))
        // A garbled reject is never answered (no reject loops).
        await harness.receive([0x01, 0x0A, 0x09], cid: .leSignaling, handle: 0x40)
        let statistics = harness.manager.statistics
        #expect(statistics.unexpectedSignalingResponses == 3)
        #expect(statistics.zeroIdentifierCommands == 1)
        #expect(statistics.malformedSignalingCommands == 2)
        #expect(statistics.commandRejectsSent == 1)
    }

    // MARK: Peripheral side

    @Test func aPeripheralRequestIsAccepted() async throws {
        let harness = try await L2CAPHarness.make()
        await harness.connect(0x40, role: .peripheral)
        let request = Task { try await harness.manager.requestConnectionParameterUpdate(Self.goodRequest, connection: 0x40) }
        let sent = try await harness.nextSignaling(handle: 0x40)
        #expect(sent.code == .connectionParameterUpdateRequest)
        #expect(sent.identifier != 0)
        #expect(try sent.decode(ConnectionParameterUpdateRequest.self) == Self.goodRequest)
        await harness.receiveSignaling(SignalingCommand(identifier: sent.identifier, ConnectionParameterUpdateResponse(result: .accepted)), handle: 0x40)
        try await request.value
    }

    @Test func aPeripheralRequestIsRejectedOrRefused() async throws {
        let harness = try await L2CAPHarness.make()
        await harness.connect(0x40, role: .peripheral)
        let first = Task { try await harness.manager.requestConnectionParameterUpdate(Self.goodRequest, connection: 0x40) }
        let sent = try await harness.nextSignaling(handle: 0x40)
        await harness.receiveSignaling(SignalingCommand(identifier: sent.identifier, ConnectionParameterUpdateResponse(result: .rejected)), handle: 0x40)
        await #expect(throws: L2CAPError.connectionParameterUpdateRejected) { try await first.value }

        let second = Task { try await harness.manager.requestConnectionParameterUpdate(Self.goodRequest, connection: 0x40) }
        let again = try await harness.nextSignaling(handle: 0x40)
        #expect(again.identifier != sent.identifier)
        await harness.receiveSignaling(SignalingCommand(identifier: again.identifier, CommandReject.commandNotUnderstood), handle: 0x40)
        await #expect(throws: L2CAPError.commandRejected(.commandNotUnderstood)) { try await second.value }
    }

    @Test func aPeripheralRequestTimesOut() async throws {
        let harness = try await L2CAPHarness.make()
        await harness.connect(0x40, role: .peripheral)
        await #expect(throws: L2CAPError.signalingTimeout(milliseconds: 50)) {
            try await harness.manager.requestConnectionParameterUpdate(Self.goodRequest, connection: 0x40, timeout: .milliseconds(50))
        }
        // A late answer finds nothing and is counted.
        let sent = try await harness.nextSignaling(handle: 0x40)
        await harness.receiveSignaling(SignalingCommand(identifier: sent.identifier, ConnectionParameterUpdateResponse(result: .accepted)), handle: 0x40)
        #expect(harness.manager.statistics.unexpectedSignalingResponses == 1)
    }

    @Test func peripheralRequestsAreCheckedBeforeSending() async throws {
        let harness = try await L2CAPHarness.make()
        await harness.connect(0x40, role: .central)
        await #expect(throws: L2CAPError.wrongRole(required: .peripheral)) {
            try await harness.manager.requestConnectionParameterUpdate(Self.goodRequest, connection: 0x40)
        }
        let invalid = ConnectionParameterUpdateRequest(intervalMin: 1, intervalMax: 2, peripheralLatency: 0, timeoutMultiplier: 10)
        await #expect(throws: L2CAPError.invalidConnectionParameters(invalid)) {
            try await harness.manager.requestConnectionParameterUpdate(invalid, connection: 0x40)
        }
        await #expect(throws: L2CAPError.unknownConnection(handle: 0x41)) {
            try await harness.manager.requestConnectionParameterUpdate(Self.goodRequest, connection: 0x41)
        }
    }
}
