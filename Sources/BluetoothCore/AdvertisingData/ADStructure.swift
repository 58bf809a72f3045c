/// One AD structure: a length octet, an AD type octet and `length - 1` octets of data
/// (Core Vol 3 Part C 11, Figure 11.1).
public struct ADStructure: Hashable, Sendable {
    /// Offset of the structure's length octet in ``AdvertisingData/bytes``.
    public let offset: Int
    public let type: ADType
    /// The data after the type octet. A slice of ``AdvertisingData/bytes`` (no copy), so
    /// its indices are those of the whole buffer: use `data.first`, `data.prefix(_:)` or
    /// `data.startIndex`-relative indexing, never `data[0]`.
    public let data: ArraySlice<UInt8>
}

/// The well-formed AD structures of advertising data, in order. Iterating allocates
/// nothing: each structure is a view on the original bytes.
public struct ADStructures: Sequence, Sendable {
    let bytes: [UInt8]
    /// End of the significant part that ``AdvertisingData/init(_:)`` validated; every
    /// structure before it fits, so the iterator needs no bounds reasoning of its own.
    let end: Int

    public func makeIterator() -> Iterator { Iterator(bytes: bytes, offset: 0, end: end) }

    public struct Iterator: IteratorProtocol, Sendable {
        let bytes: [UInt8]
        var offset: Int
        let end: Int

        public mutating func next() -> ADStructure? {
            // Re-checked anyway: a trap here would take a scanner down with it.
            guard offset + 2 <= end else { return nil }
            let length = Int(bytes[offset])
            let next = offset + 1 + length
            guard length > 0, next <= end else { return nil }
            let structure = ADStructure(
                offset: offset,
                type: ADType(bytes[offset + 1]),
                data: bytes[(offset + 2)..<next]
            )
            offset = next
            return structure
        }
    }
}

extension AdvertisingData {
    /// Calls `body` with the type and data range of each well-formed structure until it
    /// returns false. The accessors use this rather than ``structures`` because it makes
    /// no slices, so the buffer is not retained and released once per structure: on a
    /// 31-byte payload that is most of an accessor's cost.
    @inline(__always)
    func forEachStructure(_ body: (ADType, Range<Int>) -> Bool) {
        bytes.withUnsafeBufferPointer { buffer in
            let end = min(significantEnd, buffer.count)
            var offset = 0
            while offset + 2 <= end {
                let length = Int(buffer[offset])
                let next = offset + 1 + length
                guard length > 0, next <= end else { return }
                guard body(ADType(buffer[offset + 1]), (offset + 2)..<next) else { return }
                offset = next
            }
        }
    }
}
