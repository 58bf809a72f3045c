/// Wraps any transport and shows every packet, both ways, to an observer: how every
/// tool's `--btsnoop FILE` (a btsnoop writer) and `--trace` (the decoder) work. A packet is
/// observed before it is handed on, so a capture shows what arrived even if the layer
/// above then crashes on it. The observer runs on the thread that moves the packet.
public final class CapturingTransport: HCITransport {
    public typealias Observer = @Sendable (HCIPacket, PacketDirection) -> Void
    public let base: any HCITransport
    private let observe: Observer
    private let finish: @Sendable () -> Void

    public init(_ base: any HCITransport, observe: @escaping Observer, finish: @escaping @Sendable () -> Void = {}) {
        self.base = base
        self.observe = observe
        self.finish = finish
    }

    /// Records to `writer`; a capture that cannot be written must not take the link down.
    public convenience init(_ base: any HCITransport, writer: BTSnoopWriter) {
        self.init(base, observe: { packet, direction in try? writer.write(packet, direction: direction) }, finish: { writer.close() })
    }

    public var name: String { base.name }
    public var kernelAdapter: Int? { base.kernelAdapter }

    public func start(
        receive: @escaping @Sendable (HCIPacket) -> Void,
        closed: @escaping @Sendable (TransportError?) -> Void
    ) throws(TransportError) {
        let observe = self.observe
        try base.start(receive: { packet in
            observe(packet, .controllerToHost)
            receive(packet)
        }, closed: closed)
    }

    public func send(_ packet: HCIPacket) throws(TransportError) {
        observe(packet, .hostToController)
        try base.send(packet)
    }

    public func post(_ packet: HCIPacket) throws(TransportError) {
        observe(packet, .hostToController)
        try base.post(packet)
    }

    public func post(_ type: HCIPacketType, header: UnsafeRawBufferPointer, body: ArraySlice<UInt8>) throws(TransportError) {
        observe(HCIPacket(type, Array(header) + body), .hostToController)
        try base.post(type, header: header, body: body)
    }

    public func close() {
        base.close()
        finish()
    }
}
