import BluetoothCore

// The events that drive command and data flow control: they answer commands, return
// buffer credits and report controller trouble (Core Vol 4 Part E 4.4, 4.5 and 7.7).

extension HCIEvent {
    /// Command Complete (7.7.14): a command finished; its return parameters follow.
    public struct CommandComplete: HCIEventParameters {
        public static let eventCode = HCIEvent.Code.commandComplete

        /// How many more commands the controller accepts now (Num_HCI_Command_Packets).
        public var numHCICommandPackets: UInt8
        public var opcode: HCIOpcode
        /// The command's return parameters, raw: the driver decodes them with the command's
        /// own type, which this layer does not know. They start with the status byte for
        /// nearly every command; the opcode 0x0000 (a credit update) carries none.
        public var returnParameters: [UInt8]

        public init(numHCICommandPackets: UInt8, opcode: HCIOpcode, returnParameters: [UInt8]) {
            self.numHCICommandPackets = numHCICommandPackets
            self.opcode = opcode
            self.returnParameters = returnParameters
        }

        /// The first return parameter, which is the status for nearly every command.
        public var status: HCIErrorCode? { returnParameters.first.map(HCIErrorCode.init(rawValue:)) }

        public init(decoding reader: inout ByteReader) throws(DecodeError) {
            numHCICommandPackets = try reader.readUInt8()
            opcode = HCIOpcode(rawValue: try reader.readUInt16())
            returnParameters = reader.readRemaining()
        }

        public func encode(into writer: inout ByteWriter) {
            writer.write(numHCICommandPackets)
            writer.write(opcode.rawValue)
            writer.write(contentsOf: returnParameters)
        }
    }

    /// Command Status (7.7.15): a command was accepted (or refused) and will finish with a
    /// later event.
    public struct CommandStatus: HCIEventParameters {
        public static let eventCode = HCIEvent.Code.commandStatus

        public var status: HCIErrorCode
        public var numHCICommandPackets: UInt8
        public var opcode: HCIOpcode

        public init(status: HCIErrorCode, numHCICommandPackets: UInt8, opcode: HCIOpcode) {
            self.status = status
            self.numHCICommandPackets = numHCICommandPackets
            self.opcode = opcode
        }

        public init(decoding reader: inout ByteReader) throws(DecodeError) {
            status = try reader.readErrorCode()
            numHCICommandPackets = try reader.readUInt8()
            opcode = HCIOpcode(rawValue: try reader.readUInt16())
        }

        public func encode(into writer: inout ByteWriter) {
            writer.write(status)
            writer.write(numHCICommandPackets)
            writer.write(opcode.rawValue)
        }
    }

    /// Number Of Completed Packets (7.7.19): data buffer credits returned per connection.
    public struct NumberOfCompletedPackets: HCIEventParameters {
        public static let eventCode = HCIEvent.Code.numberOfCompletedPackets

        public struct Completion: Sendable, Equatable {
            /// 12 bits; higher bits are dropped.
            public var connectionHandle: UInt16
            /// Num_Completed_Packets: packets sent (or flushed) since the last event.
            public var completedPackets: UInt16

            public init(connectionHandle: UInt16, completedPackets: UInt16) {
                self.connectionHandle = connectionHandle & connectionHandleMask
                self.completedPackets = completedPackets
            }

            /// A handle and a count.
            static let size = 4

            init(decoding reader: inout ByteReader) throws(DecodeError) {
                connectionHandle = try reader.readMaskedConnectionHandle()
                completedPackets = try reader.readUInt16()
            }

            func encode(into writer: inout ByteWriter) {
                writer.writeMaskedConnectionHandle(connectionHandle)
                writer.write(completedPackets)
            }
        }

        public var completions: [Completion]

        public init(completions: [Completion]) { self.completions = completions }

        /// Num_Handles, then the completions as a parameter array.
        public init(decoding reader: inout ByteReader) throws(DecodeError) {
            completions = try reader.readParameterArray(minimumEntrySize: Completion.size, Completion.init(decoding:))
        }

        /// At most 255 completions fit the one-byte count; more are not encoded.
        public func encode(into writer: inout ByteWriter) {
            writer.writeParameterArray(completions) { completion, writer in completion.encode(into: &writer) }
        }
    }

    /// Hardware Error (7.7.16): the controller hit a fault; the code is vendor-specific.
    public struct HardwareError: HCIEventParameters {
        public static let eventCode = HCIEvent.Code.hardwareError

        public var hardwareCode: UInt8

        public init(hardwareCode: UInt8) { self.hardwareCode = hardwareCode }

        public init(decoding reader: inout ByteReader) throws(DecodeError) {
            hardwareCode = try reader.readUInt8()
        }

        public func encode(into writer: inout ByteWriter) { writer.write(hardwareCode) }
    }

    /// Data Buffer Overflow (7.7.26): the host sent more packets than it had credits for.
    public struct DataBufferOverflow: HCIEventParameters {
        public static let eventCode = HCIEvent.Code.dataBufferOverflow

        /// Link_Type: 0x00 synchronous, 0x01 ACL; kept raw.
        public var linkType: UInt8

        public init(linkType: UInt8) { self.linkType = linkType }

        public init(decoding reader: inout ByteReader) throws(DecodeError) {
            linkType = try reader.readUInt8()
        }

        public func encode(into writer: inout ByteWriter) { writer.write(linkType) }
    }
}
