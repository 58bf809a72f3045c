/// Why Data Source octets were not (part of) the answer we wait for.
///
/// A header that names another command, UID or app is most likely the late answer to a
/// command we already gave up on: the octets are dropped and the request stays outstanding.
/// Any fault after the header ends the answer (``endsResponse``): with no framing on the
/// Data Source, nothing after it can be trusted.
public enum DataSourceError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Data Source octets arrived while no Get Attributes command was outstanding.
    case nothingOutstanding(length: Int)
    case otherCommand(expected: UInt8, received: UInt8)
    case otherNotification(expected: UInt32, received: UInt32)
    /// The echoed identifier differs from ours (the octets seen up to the first difference).
    case otherApp(expected: [UInt8], received: [UInt8])
    case unrequestedAttribute(UInt8)
    case repeatedAttribute(UInt8)
    /// An attribute's length runs past what we asked for (or past the implicit cap).
    case attributeTooLong(attribute: UInt8, length: Int, maximum: Int)
    /// Octets after the last requested attribute.
    case trailingBytes(count: Int)

    public var endsResponse: Bool {
        switch self {
        case .nothingOutstanding, .otherCommand, .otherNotification, .otherApp: false
        case .unrequestedAttribute, .repeatedAttribute, .attributeTooLong, .trailingBytes: true
        }
    }

    public var description: String {
        switch self {
        case let .nothingOutstanding(length): "\(length) Data Source octet(s) while no command was outstanding"
        case let .otherCommand(expected, received): "Data Source answer to command \(received), \(expected) outstanding"
        case let .otherNotification(expected, received): "Data Source answer for notification \(received), \(expected) outstanding"
        case let .otherApp(expected, received):
            "Data Source answer for app \"\(String(decoding: received, as: UTF8.self))\", \"\(String(decoding: expected, as: UTF8.self))\" outstanding"
        case let .unrequestedAttribute(id): "Data Source attribute \(id) was not requested"
        case let .repeatedAttribute(id): "Data Source attribute \(id) arrived twice"
        case let .attributeTooLong(id, length, maximum): "Data Source attribute \(id) of \(length) octets, at most \(maximum) requested"
        case let .trailingBytes(count): "\(count) Data Source octet(s) after the last requested attribute"
        }
    }
}
