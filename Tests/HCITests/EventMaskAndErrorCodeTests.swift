import HCI
import Testing

@Suite struct EventMaskAndErrorCodeTests {
    @Test func eventMaskBits() {
        #expect(EventMask.disconnectionComplete.rawValue == 1 << 4)
        #expect(EventMask.encryptionChangeV1.rawValue == 1 << 7)
        #expect(EventMask.hardwareError.rawValue == 1 << 15)
        #expect(EventMask.dataBufferOverflow.rawValue == 1 << 25)
        #expect(EventMask.encryptionKeyRefreshComplete.rawValue == 1 << 47)
        #expect(EventMask.leMeta.rawValue == 1 << 61)
        #expect(EventMask.specificationDefault.rawValue == 0x0000_1FFF_FFFF_FFFF)
        #expect(EventMask.leHost.rawValue == 1 << 4 | 1 << 7 | 1 << 15 | 1 << 25 | 1 << 47 | 1 << 61)
        #expect(EventMaskPage2.encryptionChangeV2.rawValue == 1 << 25)
        #expect(EventMaskPage2.specificationDefault.rawValue == 0)
    }

    @Test func leEventMaskIsSubeventCodeMinusOne() {
        let named: [(LEEventMask, UInt8)] = [
            (.connectionComplete, 0x01), (.advertisingReport, 0x02), (.connectionUpdateComplete, 0x03),
            (.readRemoteFeaturesComplete, 0x04), (.longTermKeyRequest, 0x05), (.remoteConnectionParameterRequest, 0x06),
            (.dataLengthChange, 0x07), (.readLocalP256PublicKeyComplete, 0x08), (.generateDHKeyComplete, 0x09),
            (.enhancedConnectionCompleteV1, 0x0A), (.directedAdvertisingReport, 0x0B), (.phyUpdateComplete, 0x0C),
            (.extendedAdvertisingReport, 0x0D), (.scanTimeout, 0x11), (.advertisingSetTerminated, 0x12),
            (.scanRequestReceived, 0x13), (.channelSelectionAlgorithm, 0x14), (.enhancedConnectionCompleteV2, 0x29),
        ]
        for (mask, code) in named {
            #expect(mask.rawValue == 1 << UInt64(code - 1), "subevent 0x\(String(code, radix: 16))")
            #expect(mask == LEEventMask(subeventCode: code))
        }
        #expect(LEEventMask.enhancedConnectionCompleteV2.rawValue == 1 << 40)
        #expect(LEEventMask(subeventCode: 64).rawValue == 1 << 63)
        #expect(LEEventMask(subeventCode: 0).isEmpty)
        #expect(LEEventMask(subeventCode: 65).isEmpty)
        #expect(LEEventMask.specificationDefault == [.connectionComplete, .advertisingReport, .connectionUpdateComplete, .readRemoteFeaturesComplete, .longTermKeyRequest])
    }

    @Test func errorCodeNamesAndDescriptions() {
        #expect(HCIErrorCode.unknownCommand.rawValue == 0x01)
        #expect(HCIErrorCode.unknownCommand.name == "Unknown HCI Command")
        #expect(HCIErrorCode.unknownCommand.description == "Unknown HCI Command (0x01)")
        #expect(HCIErrorCode.success.description == "Success (0x00)")
        #expect(HCIErrorCode(rawValue: 0x2B).description == "error 0x2B")
        #expect(HCIErrorCode(rawValue: 0xFF).description == "error 0xFF")
        #expect(HCIErrorCode(0x13) == .remoteUserTerminatedConnection)
        #expect(HCIErrorCode.success.isSuccess && !HCIErrorCode.commandDisallowed.isSuccess)
    }

    @Test func errorCodeValuesFollowTheSpecification() {
        let expected: [(HCIErrorCode, UInt8)] = [
            (.success, 0x00), (.unknownCommand, 0x01), (.unknownConnectionIdentifier, 0x02), (.hardwareFailure, 0x03),
            (.pageTimeout, 0x04), (.authenticationFailure, 0x05), (.pinOrKeyMissing, 0x06), (.memoryCapacityExceeded, 0x07),
            (.connectionTimeout, 0x08), (.connectionLimitExceeded, 0x09), (.commandDisallowed, 0x0C),
            (.invalidCommandParameters, 0x12), (.remoteUserTerminatedConnection, 0x13),
            (.remoteDeviceTerminatedConnectionDueToPowerOff, 0x15), (.connectionTerminatedByLocalHost, 0x16),
            (.unsupportedRemoteFeature, 0x1A), (.unspecifiedError, 0x1F), (.lmpOrLLResponseTimeout, 0x22),
            (.instantPassed, 0x28), (.insufficientSecurity, 0x2F), (.controllerBusy, 0x3A),
            (.unacceptableConnectionParameters, 0x3B), (.advertisingTimeout, 0x3C),
            (.connectionTerminatedDueToMICFailure, 0x3D), (.connectionFailedToBeEstablished, 0x3E),
            (.macConnectionFailed, 0x3F), (.unknownAdvertisingIdentifier, 0x42), (.limitReached, 0x43),
            (.operationCancelledByHost, 0x44), (.packetTooLong, 0x45), (.tooLate, 0x46), (.tooEarly, 0x47),
            (.insufficientChannels, 0x48),
        ]
        for (code, value) in expected { #expect(code.rawValue == value) }
        // Every code 0x00...0x48 has a name except the ones the specification leaves unassigned.
        let unassigned: Set<UInt8> = [0x2B, 0x31, 0x33]
        for raw in UInt8(0x00)...0x48 {
            #expect((HCIErrorCode(rawValue: raw).name == nil) == unassigned.contains(raw), "0x\(String(raw, radix: 16))")
        }
        #expect(HCIErrorCode(rawValue: 0x49).name == nil)
    }
}
