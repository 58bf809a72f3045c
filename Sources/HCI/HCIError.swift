import BluetoothCore
import HCITransport

/// Why a command to the controller did not produce its result.
public enum HCIError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No Command Complete/Status arrived before the deadline.
    case commandTimedOut(HCIOpcode, milliseconds: Int)
    /// The task waiting for the answer was cancelled (a command already sent still gets
    /// its answer consumed by the driver).
    case commandCancelled(HCIOpcode)
    /// The controller answered with a non-zero status.
    case commandFailed(HCIOpcode, HCIErrorCode)
    /// The controller's answer could not be decoded as this command's return parameters.
    case malformedReturnParameters(HCIOpcode, DecodeError)
    /// The controller reported a hardware error; commands pending at that moment fail with it.
    case hardwareError(code: UInt8)
    /// The transport closed (nil: cleanly) or failed.
    case transportClosed(TransportError?)
    /// The controller does not support something the caller needs.
    case unsupported(String)
    /// The connection ended (Disconnection Complete with this reason) before the data
    /// could go out.
    case disconnected(connectionHandle: UInt16, reason: HCIErrorCode)

    public var description: String {
        switch self {
        case let .commandTimedOut(opcode, milliseconds):
            return "the controller did not answer \(opcode.name) within \(milliseconds) ms: check the transport (is the controller powered and the right one?) and try again"
        case let .commandCancelled(opcode):
            return "the wait for \(opcode.name) was cancelled"
        case let .commandFailed(opcode, status):
            return "\(opcode.name) failed: \(status)"
        case let .malformedReturnParameters(opcode, error):
            return "the controller's answer to \(opcode.name) is malformed (\(error)): the controller or its firmware is faulty"
        case let .hardwareError(code):
            return "the controller reported hardware error 0x\(Hex.string([code])); BareBLE resets it and brings it up again"
        case let .transportClosed(error):
            if let error { return "the transport failed: \(error)" }
            return "the transport to the controller is closed"
        case let .unsupported(what):
            return "the controller does not support \(what)"
        case let .disconnected(handle, reason):
            return "connection 0x\(Hex.string([UInt8(handle >> 8), UInt8(handle & 0xFF)])) is closed (\(reason)): connect again"
        }
    }
}
