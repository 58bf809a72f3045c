import BluetoothCore

/// What bring-up learned about the controller. Layers above read it to choose between
/// legacy and extended commands, size their PDUs and respect the controller's limits.
public struct ControllerInfo: Sendable, Equatable {
    public var address: BluetoothAddress
    public var version: ReadLocalVersionInformation.ReturnParameters
    public var supportedCommands: SupportedCommands
    public var lmpFeatures: LMPFeatures
    public var leFeatures: LEFeatures
    public var aclBuffer: BufferSize
    /// Zero length/count when the controller has no ISO buffers or did not report them.
    public var isoBuffer: BufferSize
    public var maximumDataLength: LEReadMaximumDataLength.ReturnParameters?
    public var numberOfAdvertisingSets: UInt8?
    public var maximumAdvertisingDataLength: UInt16?
    public var filterAcceptListSize: UInt8?
    public var resolvingListSize: UInt8?
    public var supportedStates: UInt64?
    public var eventMask: EventMask
    public var leEventMask: LEEventMask

    /// A controller's data buffers: the largest packet it accepts and how many it holds.
    public struct BufferSize: Sendable, Equatable {
        public var packetLength: Int
        public var packetCount: Int
        /// The command the figures came from (LE buffers, or shared with BR/EDR).
        public var source: String

        public init(packetLength: Int, packetCount: Int, source: String) {
            self.packetLength = packetLength
            self.packetCount = packetCount
            self.source = source
        }
    }

    public func supports<Command: HCICommand>(_ command: Command.Type) -> Bool {
        supportedCommands.supports(command)
    }
}
