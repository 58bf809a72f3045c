import ATT
import BluetoothCore

/// Every ATT PDU a peer can send (PDUFuzzTests' properties, under coverage guidance).
enum ATTTargets {
    @Sendable static func pdu(_ bytes: [UInt8]) {
        guard let pdu = try? ATTPDU(decoding: bytes) else { return }
        expect(pdu.opcode.rawValue == bytes[0], "decoded as \(pdu.opcode)")
        if case .unknown = pdu { expect(pdu.opcode.name == "unknown ATT opcode", "modelled \(pdu.opcode) decoded as unknown") }
        expect(pdu.encode() == bytes, "re-encoding differs: \(Hex.string(bytes)) -> \(Hex.string(pdu.encode()))")
    }
}
