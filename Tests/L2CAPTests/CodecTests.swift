import BluetoothCore
import L2CAP
import Testing

@Suite struct BasicFrameTests {
    @Test func roundTripsWithTheSpecificationLayout() throws {
        let frame = BasicFrame(channelID: .attributeProtocol, payload: [0x02, 0x17, 0x00])
        #expect(frame.encode() == [0x03, 0x00, 0x04, 0x00, 0x02, 0x17, 0x00])
        #expect(try BasicFrame(decoding: frame.encode()) == frame)
        let empty = BasicFrame(channelID: .securityManagerProtocol, payload: [])
        #expect(try BasicFrame(decoding: empty.encode()) == empty)
    }

    @Test(arguments: [
        ([UInt8](), DecodeError.truncated(needed: 2, available: 0)),
        ([0x01, 0x00, 0x04], .truncated(needed: 2, available: 1)),
        ([0x02, 0x00, 0x04, 0x00, 0x01], .lengthMismatch(declared: 2, actual: 1)),
        ([0x00, 0x00, 0x04, 0x00, 0x01], .lengthMismatch(declared: 0, actual: 1)),
    ])
    func malformedFramesAreTypedErrors(bytes: [UInt8], error: DecodeError) {
        #expect(throws: error) { try BasicFrame(decoding: bytes) }
    }

    @Test func channelNamesAreTheFixedLEChannels() {
        #expect(ChannelIdentifier.attributeProtocol.rawValue == 0x0004)
        #expect(ChannelIdentifier.leSignaling.rawValue == 0x0005)
        #expect(ChannelIdentifier.securityManagerProtocol.rawValue == 0x0006)
        #expect(ChannelIdentifier(0x0040).description == "CID 0x0040")
    }
}

@Suite struct SignalingCodecTests {
    @Test func commandRoundTripsWithItsHeader() throws {
        let command = SignalingCommand(identifier: 7, ConnectionParameterUpdateRequest(intervalMin: 6, intervalMax: 12, peripheralLatency: 0, timeoutMultiplier: 100))
        #expect(command.encode() == [0x12, 0x07, 0x08, 0x00, 0x06, 0x00, 0x0C, 0x00, 0x00, 0x00, 0x64, 0x00])
        let decoded = try SignalingCommand(decoding: command.encode())
        #expect(decoded == command)
        #expect(try decoded.decode(ConnectionParameterUpdateRequest.self) == ConnectionParameterUpdateRequest(intervalMin: 6, intervalMax: 12, peripheralLatency: 0, timeoutMultiplier: 100))
    }

    @Test func everyModelledDataTypeRoundTrips() throws {
        let rejects: [CommandReject] = [
            .commandNotUnderstood, .signalingMTUExceeded(actualMTU: 23),
            .invalidCIDInRequest(localCID: ChannelIdentifier(0x40), remoteCID: ChannelIdentifier(0x41)),
            .other(reason: 0x0009, data: [1, 2]),
        ]
        for reject in rejects {
            #expect(try CommandReject(decoding: reject.encode()) == reject)
            let command = SignalingCommand(identifier: 1, reject)
            #expect(try SignalingCommand(decoding: command.encode()).decode(CommandReject.self) == reject)
        }
        #expect(CommandReject.signalingMTUExceeded(actualMTU: 23).encode() == [0x01, 0x00, 0x17, 0x00])
        for result in [ConnectionParameterUpdateResponse.Result.accepted, .rejected, .init(rawValue: 7)] {
            let response = ConnectionParameterUpdateResponse(result: result)
            #expect(try ConnectionParameterUpdateResponse(decoding: response.encode()) == response)
        }
        let disconnection = DisconnectionRequest(destinationCID: ChannelIdentifier(0x40), sourceCID: ChannelIdentifier(0x41))
        #expect(try DisconnectionRequest(decoding: disconnection.encode()) == disconnection)
    }

    @Test(arguments: [
        ([UInt8](), DecodeError.truncated(needed: 1, available: 0)),
        ([0x12], .truncated(needed: 1, available: 0)),
        ([0x12, 0x01, 0x08], .truncated(needed: 2, available: 1)),
        ([0x12, 0x01, 0x08, 0x00, 0x06], .lengthMismatch(declared: 8, actual: 1)),
        ([0x13, 0x01, 0x00, 0x00, 0x00], .lengthMismatch(declared: 0, actual: 1)),
    ])
    func malformedCommandsAreTypedErrors(bytes: [UInt8], error: DecodeError) {
        #expect(throws: error) { try SignalingCommand(decoding: bytes) }
    }

    @Test func malformedDataIsATypedError() {
        #expect(throws: DecodeError.truncated(needed: 2, available: 1)) { try CommandReject(decoding: [0x01, 0x00, 0x17]) }
        #expect(throws: DecodeError.trailingBytes(count: 1)) { try CommandReject(decoding: [0x00, 0x00, 0x00]) }
        #expect(throws: DecodeError.truncated(needed: 2, available: 0)) { try ConnectionParameterUpdateRequest(decoding: [6, 0, 12, 0, 0, 0]) }
        #expect(throws: DecodeError.trailingBytes(count: 1)) { try ConnectionParameterUpdateResponse(decoding: [0, 0, 0]) }
        let response = SignalingCommand(identifier: 1, ConnectionParameterUpdateResponse(result: .accepted))
        #expect(throws: DecodeError.invalidValue(field: "signaling code", value: 0x13)) { try response.decode(CommandReject.self) }
    }

    @Test func parameterRangesFollowTheSpecification() {
        func request(_ min: UInt16, _ max: UInt16, _ latency: UInt16, _ timeout: UInt16) -> ConnectionParameterUpdateRequest {
            ConnectionParameterUpdateRequest(intervalMin: min, intervalMax: max, peripheralLatency: latency, timeoutMultiplier: timeout)
        }
        #expect(request(6, 3200, 0, 3200).isValid)            // 7.5 ms ... 4 s, 32 s timeout
        #expect(request(6, 6, 499, 3200).isValid)             // latency 499 fits: 500 * 7.5 * 2 = 7.5 s
        #expect(!request(5, 12, 0, 100).isValid)              // below 7.5 ms
        #expect(!request(6, 3201, 0, 3200).isValid)           // above 4 s
        #expect(!request(12, 6, 0, 100).isValid)              // min above max
        #expect(!request(6, 6, 500, 3200).isValid)            // latency 500
        #expect(!request(6, 6, 0, 9).isValid)                 // timeout below 100 ms
        #expect(!request(6, 6, 0, 3201).isValid)              // timeout above 32 s
        // Timeout must exceed (1 + latency) * max * 2: 40 * 1.25 * 2 = 100 ms is not enough.
        #expect(!request(40, 40, 0, 10).isValid)
        #expect(request(39, 39, 0, 10).isValid)               // 97.5 ms < 100 ms
        #expect(!request(24, 24, 4, 30).isValid)              // 5 * 30 ms * 2 = 300 ms, not more
        #expect(request(24, 24, 4, 31).isValid)
    }
}
