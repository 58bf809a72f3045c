import ATT

/// The application's side of one attribute on our server: produces the value a client
/// reads and takes the value a client writes, instead of the database's stored value
/// (Core 5.4 Vol 3 Part G 3.3.2: the value "can be" anything the profile defines).
///
/// A class so the database model stays `Hashable`: two handlers are equal only when they
/// are the same object.
public final class GATTAttributeHandler: Sendable, Hashable {
    /// Answers a read with the whole value (at most 512 octets), or throws the ATT error to
    /// answer with (an application error 0x80-0x9F, Insufficient Authorization...).
    public typealias Read = @Sendable (ATTServerContext) async throws(ATTErrorCode) -> [UInt8]
    /// Accepts a whole written value, or throws the ATT error to answer with.
    public typealias Write = @Sendable ([UInt8], ATTServerContext) async throws(ATTErrorCode) -> Void

    /// Nil: reads serve the database's stored value.
    public let read: Read?
    /// Nil: writes replace the database's stored value.
    public let write: Write?

    public init(read: Read? = nil, write: Write? = nil) {
        self.read = read
        self.write = write
    }

    public static func == (lhs: GATTAttributeHandler, rhs: GATTAttributeHandler) -> Bool { lhs === rhs }

    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
