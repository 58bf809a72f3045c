/// A byte pipe to one controller: H4 over TCP or a UART, or a Linux HCI socket.
///
/// A transport owns one reader thread. Packets from the controller are handed to the
/// `receive` closure on that thread, in order, synchronously: the layer above decides what
/// to do with them (the lowest-latency scan path runs right there). `send` may be called
/// from any thread.
public protocol HCITransport: AnyObject, Sendable {
    /// The spec string this transport was opened from, e.g. "tcp:127.0.0.1:4000".
    var name: String { get }

    /// Starts reading. `receive` gets every packet from the controller; `closed` is called
    /// once, when the stream ends (nil) or fails, after which `receive` is not called again.
    func start(
        receive: @escaping @Sendable (HCIPacket) -> Void,
        closed: @escaping @Sendable (TransportError?) -> Void
    ) throws(TransportError)

    /// Writes one packet to the controller.
    func send(_ packet: HCIPacket) throws(TransportError)

    /// Hands one packet to the transport without waiting for the controller to take it
    /// (async code's path: no thread of the tasks' pool waits for a stalled stream). A
    /// packet that cannot go out later ends the transport: `closed` says why. Default:
    /// ``send(_:)``.
    func post(_ packet: HCIPacket) throws(TransportError)

    /// ``post(_:)`` of a packet given as its header and body apart, so a sender that keeps
    /// them apart (the driver: an ACL packet's 4-octet header before L2CAP's octets) builds
    /// no packet of its own for each one. Default: joins them and posts the packet.
    func post(_ type: HCIPacketType, header: UnsafeRawBufferPointer, body: ArraySlice<UInt8>) throws(TransportError)

    /// Stops the reader thread and closes the descriptor. Idempotent.
    func close()

    /// The adapter index N when the kernel's own Bluetooth stack keeps driving the
    /// controller beside us (`hci-raw:N`): then the host must not reset it or change its
    /// event masks, must undo what it switched on (scanning, advertising) before it lets
    /// go, and makes connections through the kernel's sockets on that adapter. Nil for
    /// every transport that gives us the controller alone.
    var kernelAdapter: Int? { get }
}

extension HCITransport {
    public var kernelAdapter: Int? { nil }

    public func post(_ packet: HCIPacket) throws(TransportError) { try send(packet) }

    public func post(_ type: HCIPacketType, header: UnsafeRawBufferPointer, body: ArraySlice<UInt8>) throws(TransportError) {
        try post(HCIPacket(type, Array(header) + body))
    }

    /// True on `hci-raw:N` (``kernelAdapter`` is set).
    public var sharesControllerWithKernel: Bool { kernelAdapter != nil }
}
