/// Reassembles one answer on the Data Source (ANCS specification, "Data Source"). iOS
/// splits an answer into as many notifications as the MTU needs and repeats no header, so
/// an answer is known complete only when every requested attribute has arrived.
///
/// Holds at most one request. What it keeps is bounded by that request: the values
/// accepted (each checked against its maximum length when its header arrives, before its
/// octets are kept) plus the octets of one unfinished item, so never more than the
/// request's ``DataSourceRequest/maximumResponseLength`` plus one notification. It reads no
/// clock: the session gives up on an answer at its deadline with ``cancel()``.
public struct DataSourceAssembler: Sendable {
    public private(set) var request: DataSourceRequest?
    /// Octets received and not yet consumed as a header or a whole attribute.
    var pending: [UInt8] = []
    var headerDone = false
    var values: [UInt8: [UInt8]] = [:]
    /// Octets accepted into the current answer so far.
    public private(set) var receivedLength = 0

    public init() {}

    /// Waits for the answer to `request`, forgetting any unfinished answer.
    public mutating func expect(_ request: DataSourceRequest) {
        reset()
        self.request = request
    }

    /// Stops waiting (deadline passed, command failed, session ended).
    public mutating func cancel() {
        reset()
        request = nil
    }

    /// The requested attributes not received yet, by ID.
    public var missingAttributes: [UInt8] {
        guard let request else { return [] }
        return request.maximumLengths.keys.filter { values[$0] == nil }.sorted()
    }

    /// Takes one Data Source notification. Returns the answer once it is complete (the
    /// request is then done), nil while it is not.
    ///
    /// A header begun in an earlier notification and contradicted by this one was the tail
    /// of a stray or abandoned answer read as a header (under 5 octets whose first is the
    /// command we sent: a length's high byte 0x00 does that). iOS starts every answer at a
    /// notification boundary, so this notification is tried again alone as the start of
    /// the answer: the real answer is not thrown away with the stray. The stray is still
    /// reported (thrown) unless this notification completes the answer by itself.
    public mutating func receive(_ fragment: [UInt8]) throws(DataSourceError) -> DataSourceResponse? {
        guard let request else { throw .nothingOutstanding(length: fragment.count) }
        let headerBegunBefore = !headerDone && !pending.isEmpty
        pending.append(contentsOf: fragment)
        receivedLength += fragment.count
        do {
            try consume(request)
        } catch {
            if error.endsResponse {
                cancel()
                throw error
            }
            reset()
            guard headerBegunBefore else { throw error }
            pending = fragment
            receivedLength = fragment.count
            do {
                try consume(request)
            } catch let retried {
                if retried.endsResponse { cancel() } else { reset() }
                throw retried
            }
            if let response = completed(request) { return response }
            throw error
        }
        return completed(request)
    }

    private mutating func consume(_ request: DataSourceRequest) throws(DataSourceError) {
        if !headerDone { try readHeader(request) }
        if headerDone { try readAttributes(request) }
    }

    /// The answer, once every requested attribute is in (the request is then done).
    private mutating func completed(_ request: DataSourceRequest) -> DataSourceResponse? {
        guard headerDone, values.count == request.maximumLengths.count else { return nil }
        let response = DataSourceResponse(subject: request.subject, values: values)
        cancel()
        return response
    }

    private mutating func reset() {
        pending = []
        headerDone = false
        values = [:]
        receivedLength = 0
    }

    /// Checks each header octet as soon as it arrives, so a stray answer is dropped at its
    /// first differing octet and an app identifier never has to be buffered whole to refuse it.
    private mutating func readHeader(_ request: DataSourceRequest) throws(DataSourceError) {
        guard let command = pending.first else { return }
        guard command == request.commandID.rawValue else {
            throw .otherCommand(expected: request.commandID.rawValue, received: command)
        }
        switch request.subject {
        case let .notification(uid):
            guard pending.count >= 5 else { return }
            let received = UInt32(pending[1]) | UInt32(pending[2]) << 8 | UInt32(pending[3]) << 16 | UInt32(pending[4]) << 24
            guard received == uid else { throw .otherNotification(expected: uid, received: received) }
        case let .app(identifier):
            let expected = identifier + [0]
            let available = min(pending.count - 1, expected.count)
            for index in 0..<available where pending[1 + index] != expected[index] {
                throw .otherApp(expected: identifier, received: Array(pending[1...(1 + index)]))
            }
            guard available == expected.count else { return }
        }
        pending.removeFirst(request.headerLength)
        headerDone = true
    }

    private mutating func readAttributes(_ request: DataSourceRequest) throws(DataSourceError) {
        while values.count < request.maximumLengths.count, pending.count >= 3 {
            let id = pending[0]
            let length = Int(pending[1]) | Int(pending[2]) << 8
            guard let maximum = request.maximumLengths[id] else { throw .unrequestedAttribute(id) }
            guard values[id] == nil else { throw .repeatedAttribute(id) }
            guard length <= maximum else { throw .attributeTooLong(attribute: id, length: length, maximum: maximum) }
            guard pending.count >= 3 + length else { return }
            values[id] = Array(pending[3..<(3 + length)])
            pending.removeFirst(3 + length)
        }
        if values.count == request.maximumLengths.count, !pending.isEmpty {
            throw .trailingBytes(count: pending.count)
        }
    }
}
