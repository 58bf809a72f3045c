import BluetoothCore

// Exchange MTU (Core 5.4 Vol 3 Part F 3.4.2). Values below 23 decode unchanged: what to do
// with a peer that announces one (use 23) is the client's and server's decision, not the
// decoder's.

/// Exchange MTU Request (0x02): the client's receive MTU.
public struct ExchangeMTURequest: ATTPDUParameters, Hashable {
    public static let opcode = ATTOpcode.exchangeMTURequest

    public var clientRxMTU: UInt16

    public init(clientRxMTU: UInt16) { self.clientRxMTU = clientRxMTU }

    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        clientRxMTU = try reader.readUInt16()
    }

    public func encode(into writer: inout ByteWriter) { writer.write(clientRxMTU) }
}

/// Exchange MTU Response (0x03): the server's receive MTU.
public struct ExchangeMTUResponse: ATTPDUParameters, Hashable {
    public static let opcode = ATTOpcode.exchangeMTUResponse

    public var serverRxMTU: UInt16

    public init(serverRxMTU: UInt16) { self.serverRxMTU = serverRxMTU }

    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        serverRxMTU = try reader.readUInt16()
    }

    public func encode(into writer: inout ByteWriter) { writer.write(serverRxMTU) }
}
