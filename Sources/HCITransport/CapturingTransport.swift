/// Wraps any transport and records every packet, both ways, to a btsnoop writer: how
/// every tool's `--btsnoop FILE` works. A packet is recorded before it is handed on, so a
/// capture shows what arrived even if the layer above then crashes on it.
public final class CapturingTransport: HCITransport {
    public let base: any HCITransport
    public let writer: BTSnoopWriter

    public init(_ base: any HCITransport, writer: BTSnoopWriter) {
        self.base = base
        self.writer = writer
    }

    public var name: String { base.name }
    public var kernelAdapter: Int? { base.kernelAdapter }

    public func start(
        receive: @escaping @Sendable (HCIPacket) -> Void,
        closed: @escaping @Sendable (TransportError?) -> Void
    ) throws(TransportError) {
        let writer = self.writer
        try base.start(receive: { packet in
            // A capture that cannot be written must not take the link down with it.
            try? writer.write(packet, direction: .controllerToHost)
            receive(packet)
        }, closed: closed)
    }

    public func send(_ packet: HCIPacket) throws(TransportError) {
        try? writer.write(packet, direction: .hostToController)
        try base.send(packet)
    }

    public func close() {
        base.close()
        writer.close()
    }
}
