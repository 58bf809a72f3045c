import HCITransport

extension HCIController {
    /// Opens the transport `spec` names, records every packet to `capture` and shows it to
    /// `observe` when given (`--trace`; `observeFinished` runs when the transport closes),
    /// and
    /// starts the driver (the controller is not powered on yet): the one way tools and the
    /// facade get from a transport string to a controller. `readerWait` chooses the reader
    /// thread's way of waiting: ``ReaderWait/spinning(window:)`` for the lowest latency.
    public static func open(
        _ spec: TransportSpec, capture: BTSnoopWriter? = nil, observe: CapturingTransport.Observer? = nil,
        observeFinished: @escaping @Sendable () -> Void = {}, readerWait: ReaderWait = .blocking
    ) throws(TransportError) -> HCIController {
        var transport = try spec.open(wait: readerWait)
        if let capture { transport = CapturingTransport(transport, writer: capture) }
        if let observe { transport = CapturingTransport(transport, observe: observe, finish: observeFinished) }
        let controller = HCIController(transport: transport)
        try controller.start()
        return controller
    }
}
