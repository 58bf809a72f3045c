import BluetoothCore
import HCI
import Testing
import TestSupport

/// HCI events other than LE Meta: real byte sequences written from the layouts in Core
/// Vol 4 Part E 7.7, round trips, and malformed input.
@Suite struct EventTests {
    func decode(_ hex: String) throws -> HCIEvent {
        try HCIEvent(decoding: Hex.bytes(hex)!)
    }

    @Test func commandCompleteForReset() throws {
        let event = try decode("0E 04 01 03 0C 00")
        guard case .commandComplete(let complete) = event else {
            Issue.record("decoded as \(event)")
            return
        }
        #expect(complete.numHCICommandPackets == 1)
        #expect(complete.opcode == HCIOpcode(ogf: 0x03, ocf: 0x003))
        #expect(complete.returnParameters == [0x00])
        #expect(complete.status == .success)
        #expect(event.code == 0x0E)
        #expect(event.encode() == Hex.bytes("0E 04 01 03 0C 00"))
    }

    @Test func commandCompleteWithoutReturnParameters() throws {
        // Opcode 0x0000 only hands back command credits.
        let event = try decode("0E 03 05 00 00")
        #expect(event == .commandComplete(.init(numHCICommandPackets: 5, opcode: HCIOpcode(rawValue: 0), returnParameters: [])))
        if case .commandComplete(let complete) = event { #expect(complete.status == nil) }
    }

    @Test func commandCompleteKeepsReturnParametersRaw() throws {
        // LE Read Buffer Size [v1]: status, LE_ACL_Data_Packet_Length 251, Total_Num 8.
        let event = try decode("0E 07 01 02 20 00 FB 00 08")
        #expect(event == .commandComplete(.init(numHCICommandPackets: 1, opcode: HCIOpcode(rawValue: 0x2002), returnParameters: [0x00, 0xFB, 0x00, 0x08])))
    }

    @Test func commandStatusForCreateConnection() throws {
        let event = try decode("0F 04 00 01 0D 20")
        #expect(event == .commandStatus(.init(status: .success, numHCICommandPackets: 1, opcode: HCIOpcode(ogf: 0x08, ocf: 0x00D))))
        let refused = try decode("0F 04 0C 01 0D 20")
        if case .commandStatus(let status) = refused { #expect(status.status == .commandDisallowed) }
    }

    @Test func disconnectionComplete() throws {
        let event = try decode("05 04 00 40 00 13")
        #expect(event == .disconnectionComplete(.init(status: .success, connectionHandle: 0x0040, reason: .remoteUserTerminatedConnection)))
    }

    @Test func reservedHandleBitsAreMasked() throws {
        // The top four bits of a connection handle field are reserved: ignored, not fatal.
        let event = try decode("05 04 00 40 F0 16")
        #expect(event == .disconnectionComplete(.init(status: .success, connectionHandle: 0x0040, reason: .connectionTerminatedByLocalHost)))
        #expect(event.encode() == Hex.bytes("05 04 00 40 00 16"))
        #expect(HCIEvent.DisconnectionComplete(status: .success, connectionHandle: 0xF123, reason: .success).connectionHandle == 0x0123)
    }

    @Test func encryptionChangeBothVersions() throws {
        let v1 = try decode("08 04 00 40 00 01")
        #expect(v1 == .encryptionChange(.init(status: .success, connectionHandle: 0x40, encryptionEnabled: 1)))
        #expect(v1.code == 0x08)
        let v2 = try decode("59 05 00 40 00 01 10")
        #expect(v2 == .encryptionChange(.init(status: .success, connectionHandle: 0x40, encryptionEnabled: 1, keySize: 16)))
        #expect(v2.code == 0x59)
        #expect(v2.encode() == Hex.bytes("59 05 00 40 00 01 10"))
        if case .encryptionChange(let change) = v2 { #expect(change.isEncrypted) }
        // Each code has exactly one length.
        #expect(throws: DecodeError.truncated(needed: 1, available: 0)) { try decode("59 04 00 40 00 01") }
        #expect(throws: DecodeError.trailingBytes(count: 1)) { try decode("08 05 00 40 00 01 10") }
        // The protocol initializer, which does not see the code, goes by length.
        var reader = ByteReader([0x00, 0x40, 0x00, 0x01, 0x07])
        #expect(try HCIEvent.EncryptionChange(decoding: &reader).keySize == 7)
    }

    @Test func encryptionKeyRefreshComplete() throws {
        #expect(try decode("30 03 00 41 00") == .encryptionKeyRefreshComplete(.init(status: .success, connectionHandle: 0x41)))
    }

    @Test func numberOfCompletedPackets() throws {
        // Handles and counts interleaved per connection, as Core 5.x lays out arrays.
        let event = try decode("13 09 02 40 00 01 00 41 00 02 00")
        #expect(event == .numberOfCompletedPackets(.init(completions: [
            .init(connectionHandle: 0x40, completedPackets: 1),
            .init(connectionHandle: 0x41, completedPackets: 2),
        ])))
        #expect(try decode("13 01 00") == .numberOfCompletedPackets(.init(completions: [])))
    }

    @Test func numberOfCompletedPacketsChecksCountBeforeAllocating() {
        // 255 handles announced, one present: rejected on the count, not after reading.
        #expect(throws: DecodeError.lengthMismatch(declared: 1020, actual: 4)) { try decode("13 05 FF 40 00 01 00") }
        #expect(throws: DecodeError.trailingBytes(count: 4)) { try decode("13 09 01 40 00 01 00 41 00 02 00") }
    }

    @Test func hardwareErrorAndDataBufferOverflow() throws {
        #expect(try decode("10 01 05") == .hardwareError(.init(hardwareCode: 5)))
        #expect(try decode("1A 01 01") == .dataBufferOverflow(.init(linkType: 1)))
    }

    @Test func unknownEventsKeepTheirBytes() throws {
        // Vendor event, Read Remote Version Information Complete: not modelled, never an error.
        #expect(try decode("FF 03 01 02 03") == .unknown(code: 0xFF, parameters: [1, 2, 3]))
        #expect(try decode("0C 08 00 40 00 0D 5F 00 00 00") == .unknown(code: 0x0C, parameters: [0x00, 0x40, 0x00, 0x0D, 0x5F, 0x00, 0x00, 0x00]))
        #expect(try decode("FF 00") == .unknown(code: 0xFF, parameters: []))
        #expect(HCIEvent.unknown(code: 0xFF, parameters: [9]).encode() == [0xFF, 0x01, 0x09])
    }

    @Test func lengthByteMustMatch() {
        #expect(throws: DecodeError.truncated(needed: 2, available: 0)) { try HCIEvent(decoding: []) }
        #expect(throws: DecodeError.truncated(needed: 2, available: 1)) { try HCIEvent(decoding: [0x0E]) }
        // Declared longer than present, and shorter.
        #expect(throws: DecodeError.lengthMismatch(declared: 5, actual: 4)) { try decode("0E 05 01 03 0C 00") }
        #expect(throws: DecodeError.lengthMismatch(declared: 3, actual: 4)) { try decode("0E 03 01 03 0C 00") }
        #expect(throws: DecodeError.lengthMismatch(declared: 255, actual: 0)) { try decode("FF FF") }
    }

    @Test func malformedKnownEventsThrow() {
        #expect(throws: DecodeError.truncated(needed: 2, available: 1)) { try decode("0E 02 01 03") }
        #expect(throws: DecodeError.truncated(needed: 1, available: 0)) { try decode("10 00") }
        #expect(throws: DecodeError.trailingBytes(count: 1)) { try decode("10 02 05 06") }
        #expect(throws: DecodeError.truncated(needed: 1, available: 0)) { try decode("3E 00") }
    }

    /// Every prefix of every modelled event's encoding, with the length byte corrected or
    /// left as it was, fails with a typed error (Command Complete's return parameters are
    /// free-form, so only its fixed header counts there).
    @Test(arguments: EventDecoderCase.all)
    func everyPrefixFails(_ decoder: EventDecoderCase) {
        var random = SeededRandom(seed: 7)
        for _ in 0..<20 {
            let packet = decoder.makeValid(&random).encode()
            let minimum = packet[0] == 0x0E ? 2 + 3 : packet.count
            for cut in 0..<minimum {
                var prefix = Array(packet.prefix(cut))
                #expect(throws: DecodeError.self) { try HCIEvent(decoding: prefix) }
                if cut >= 2 {
                    prefix[1] = UInt8(cut - 2)
                    #expect(throws: DecodeError.self) { try HCIEvent(decoding: prefix) }
                }
            }
        }
    }

    @Test(arguments: EventDecoderCase.all)
    func randomValuesRoundTrip(_ decoder: EventDecoderCase) throws {
        var random = SeededRandom(seed: 11)
        for _ in 0..<200 {
            let value = decoder.makeValid(&random)
            let bytes = value.encode()
            #expect(bytes.count - 2 == Int(bytes[1]))
            let decoded = try HCIEvent(decoding: bytes)
            #expect(decoded == value)
            #expect(decoded.encode() == bytes)
        }
    }

    @Test func parameterProtocolRoundTrips() throws {
        func roundTrip<P: HCIEventParameters>(_ value: P) throws {
            var writer = ByteWriter()
            value.encode(into: &writer)
            var reader = ByteReader(writer.bytes)
            #expect(try P(decoding: &reader) == value)
            #expect(reader.isAtEnd)
        }
        try roundTrip(HCIEvent.CommandComplete(numHCICommandPackets: 1, opcode: HCIOpcode(rawValue: 0x0C03), returnParameters: [0]))
        try roundTrip(HCIEvent.CommandStatus(status: .success, numHCICommandPackets: 1, opcode: HCIOpcode(rawValue: 0x0406)))
        try roundTrip(HCIEvent.DisconnectionComplete(status: .success, connectionHandle: 1, reason: .connectionTimeout))
        try roundTrip(HCIEvent.EncryptionChange(status: .pinOrKeyMissing, connectionHandle: 1, encryptionEnabled: 0))
        try roundTrip(HCIEvent.EncryptionChange(status: .success, connectionHandle: 1, encryptionEnabled: 1, keySize: 16))
        try roundTrip(HCIEvent.EncryptionKeyRefreshComplete(status: .success, connectionHandle: 0xEFF))
        try roundTrip(HCIEvent.NumberOfCompletedPackets(completions: [.init(connectionHandle: 1, completedPackets: 3)]))
        try roundTrip(HCIEvent.HardwareError(hardwareCode: 0x22))
        try roundTrip(HCIEvent.DataBufferOverflow(linkType: 0x01))
        #expect(HCIEvent.CommandComplete.eventCode == 0x0E)
        #expect(HCIEvent.CommandStatus.eventCode == 0x0F)
        #expect(HCIEvent.DisconnectionComplete.eventCode == 0x05)
        #expect(HCIEvent.EncryptionChange.eventCode == 0x08)
        #expect(HCIEvent.EncryptionKeyRefreshComplete.eventCode == 0x30)
        #expect(HCIEvent.NumberOfCompletedPackets.eventCode == 0x13)
        #expect(HCIEvent.HardwareError.eventCode == 0x10)
        #expect(HCIEvent.DataBufferOverflow.eventCode == 0x1A)
    }
}
