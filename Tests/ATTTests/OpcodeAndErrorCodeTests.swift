import ATT
import Testing

@Suite struct OpcodeAndErrorCodeTests {
    @Test func flagBits() {
        #expect(ATTOpcode.writeCommand.isCommand)
        #expect(!ATTOpcode.writeCommand.hasAuthenticationSignature)
        #expect(ATTOpcode.signedWriteCommand.isCommand)
        #expect(ATTOpcode.signedWriteCommand.hasAuthenticationSignature)
        #expect(ATTOpcode.signedWriteCommand.method == ATTOpcode.writeRequest.method)
        #expect(!ATTOpcode.writeRequest.isCommand)
        #expect(ATTOpcode(rawValue: 0x7F).kind == .command)
        #expect(ATTOpcode(rawValue: 0x3F).kind == nil)
        #expect(ATTOpcode(rawValue: 0x3F).name == "unknown ATT opcode")
    }

    @Test func everyRequestHasTheNextOpcodeAsItsResponse() {
        let requests: [(ATTOpcode, ATTOpcode)] = [
            (.exchangeMTURequest, .exchangeMTUResponse), (.findInformationRequest, .findInformationResponse),
            (.findByTypeValueRequest, .findByTypeValueResponse), (.readByTypeRequest, .readByTypeResponse),
            (.readRequest, .readResponse), (.readBlobRequest, .readBlobResponse),
            (.readMultipleRequest, .readMultipleResponse), (.readByGroupTypeRequest, .readByGroupTypeResponse),
            (.writeRequest, .writeResponse), (.prepareWriteRequest, .prepareWriteResponse),
            (.executeWriteRequest, .executeWriteResponse), (.readMultipleVariableRequest, .readMultipleVariableResponse),
        ]
        for (request, response) in requests {
            #expect(request.kind == .request)
            #expect(response.kind == .response)
            #expect(request.responseOpcode == response)
        }
        #expect(ATTOpcode.errorResponse.kind == .response)
        #expect(ATTOpcode.handleValueIndication.responseOpcode == nil)
        #expect(ATTOpcode.writeCommand.responseOpcode == nil)
        #expect(ATTOpcode.readByGroupTypeRequest.description == "Read By Group Type Request (0x10)")
    }

    @Test func errorCodeNames() {
        let expected: [(UInt8, String)] = [
            (0x01, "Invalid Handle"), (0x02, "Read Not Permitted"), (0x03, "Write Not Permitted"), (0x04, "Invalid PDU"),
            (0x05, "Insufficient Authentication"), (0x06, "Request Not Supported"), (0x07, "Invalid Offset"),
            (0x08, "Insufficient Authorization"), (0x09, "Prepare Queue Full"), (0x0A, "Attribute Not Found"),
            (0x0B, "Attribute Not Long"), (0x0C, "Encryption Key Size Too Short"), (0x0D, "Invalid Attribute Value Length"),
            (0x0E, "Unlikely Error"), (0x0F, "Insufficient Encryption"), (0x10, "Unsupported Group Type"),
            (0x11, "Insufficient Resources"), (0x12, "Database Out Of Sync"), (0x13, "Value Not Allowed"),
            (0xFC, "Write Request Rejected"),
            (0xFD, "Client Characteristic Configuration Descriptor Improperly Configured"),
            (0xFE, "Procedure Already in Progress"), (0xFF, "Out of Range"),
        ]
        #expect(ATTErrorCode.named.map(\.rawValue) == expected.map(\.0))
        for (raw, name) in expected { #expect(ATTErrorCode(rawValue: raw).name == name) }
        #expect(ATTErrorCode.insufficientEncryption.rawValue == 0x0F)
        #expect(ATTErrorCode(rawValue: 0x80).isApplicationError)
        #expect(ATTErrorCode(rawValue: 0x9F).name == "Application Error")
        #expect(!ATTErrorCode(rawValue: 0xA0).isApplicationError)
        #expect(ATTErrorCode(rawValue: 0xA0).name == "Reserved")
        #expect(ATTErrorCode(rawValue: 0x14).name == "Reserved")
        #expect(ATTErrorCode.outOfRange.isCommonProfileAndServiceError)
        #expect(ATTErrorCode.attributeNotFound.description == "Attribute Not Found (0x0A)")
    }
}
