/// Advertising or scan response data: a sequence of AD structures, each a length octet, an
/// AD type octet and data (Core Vol 3 Part C 11; Core Specification Supplement Part A).
///
/// Built for a scanner's hot path: ``init(_:)`` makes one pass over the length octets and
/// allocates nothing; every accessor computes its answer from ``bytes`` when asked.
/// Decoding is total: whatever the input, the well-formed structures are available and
/// ``malformations`` says what was not well formed.
public struct AdvertisingData: Sendable, Hashable {
    /// The bytes as received (or built), including anything malformed.
    public let bytes: [UInt8]

    /// End of the significant part: the well-formed structures are `bytes[..<significantEnd]`.
    let significantEnd: Int
    /// Why the significant part ends before `bytes.count`, if it does.
    let ending: Ending

    enum Ending: UInt8, Sendable {
        /// The last structure ends exactly at the end of the bytes.
        case complete
        /// A zero length octet, followed only by zero bytes (Core Vol 3 Part C 11 allows
        /// this padding).
        case padding
        /// A zero length octet followed by at least one non-zero byte.
        case paddingWithGarbage
        /// A length octet announcing more bytes than remain.
        case overrun
    }

    /// Parses `bytes`. Never fails: structures that are well formed are available, and
    /// ``malformations`` says what was not.
    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
        let count = bytes.count
        var offset = 0
        var ending = Ending.complete
        // One pass over the length octets; content is checked lazily by `malformations`.
        // A `while` with explicit indices keeps this free of iterator and closure
        // overhead; `offset < count` guards every read.
        while offset < count {
            let length = Int(bytes[offset])
            if length == 0 {
                ending = .padding
                var index = offset + 1
                while index < count {
                    if bytes[index] != 0 {
                        ending = .paddingWithGarbage
                        break
                    }
                    index += 1
                }
                break
            }
            if length > count - offset - 1 {
                ending = .overrun
                break
            }
            offset += 1 + length
        }
        self.significantEnd = min(offset, count)
        self.ending = ending
    }

    public static let empty = AdvertisingData([])

    // Equality and hashing follow the bytes alone: everything else is derived from them,
    // and comparing one array is cheaper than comparing it plus the derived fields.
    public static func == (lhs: AdvertisingData, rhs: AdvertisingData) -> Bool { lhs.bytes == rhs.bytes }
    public func hash(into hasher: inout Hasher) { hasher.combine(bytes) }

    /// The well-formed structures, in order; nothing after a malformed length or a zero
    /// length octet.
    public var structures: ADStructures { ADStructures(bytes: bytes, end: significantEnd) }

    /// The data of the first structure of `type`, or nil.
    public func first(_ type: ADType) -> ArraySlice<UInt8>? {
        firstRange(type).map { bytes[$0] }
    }

    /// The data range of the first structure of `type`, or nil.
    func firstRange(_ type: ADType) -> Range<Int>? {
        var found: Range<Int>?
        forEachStructure { structureType, range in
            if structureType == type { found = range }
            return found == nil
        }
        return found
    }

    /// The data of every structure of `type`, in order.
    public func all(_ type: ADType) -> [ArraySlice<UInt8>] {
        var found: [ArraySlice<UInt8>] = []
        for structure in structures where structure.type == type {
            found.append(structure.data)
        }
        return found
    }

    /// True when neither the layout nor any structure's content is malformed.
    public var isWellFormed: Bool { malformations.isEmpty }

    /// Every malformation, in order of offset: the layout problem that ended the
    /// significant part (if any) after the content problems of the structures before it.
    ///
    /// One list for both kinds because a user asks one question ("did this peer follow the
    /// specification, and where not?"). Computed on demand, so the hot path never pays.
    public var malformations: [ADMalformation] {
        var found: [ADMalformation] = []
        for structure in structures {
            if let reason = Self.contentProblem(structure) {
                found.append(ADMalformation(offset: structure.offset, type: structure.type, reason: reason))
            }
        }
        switch ending {
        case .complete, .padding:
            break
        case .paddingWithGarbage:
            let garbage = bytes[(significantEnd + 1)...].reduce(0) { $0 + ($1 == 0 ? 0 : 1) }
            found.append(ADMalformation(offset: significantEnd, type: nil, reason: .nonZeroAfterTerminator(count: garbage)))
        case .overrun:
            found.append(ADMalformation(
                offset: significantEnd,
                type: nil,
                reason: .structureRunsPastEnd(
                    declaredLength: Int(bytes[significantEnd]),
                    available: bytes.count - significantEnd - 1
                )
            ))
        }
        return found
    }

    /// Whether the significant part ended with zero-length padding (which is allowed).
    public var hasPadding: Bool { ending == .padding || ending == .paddingWithGarbage }

    static func contentProblem(_ structure: ADStructure) -> ADMalformation.Reason? {
        let count = structure.data.count
        switch structure.type.contentRule {
        case .any:
            return nil
        case let .exactly(size):
            return count == size ? nil : .wrongLength(expected: size...size, actual: count)
        case let .between(low, high):
            return (low...high).contains(count) ? nil : .wrongLength(expected: low...high, actual: count)
        case let .atLeast(minimum):
            return count >= minimum ? nil : .tooShort(minimum: minimum, actual: count)
        case let .multiple(size):
            let leftover = count % size
            return leftover == 0 ? nil : .partialElement(elementSize: size, leftover: leftover)
        case .utf8:
            return String(validating: structure.data, as: UTF8.self) == nil ? .invalidUTF8 : nil
        case .uri:
            guard String(validating: structure.data, as: UTF8.self) != nil else { return .invalidUTF8 }
            return URIScheme.problem(structure.data)
        }
    }
}

extension AdvertisingData {
    /// What a scanner knows about one advertiser: its advertising data followed by its
    /// scan response data, so every accessor answers over both.
    ///
    /// Concatenation is well defined because both are sequences of AD structures
    /// (Core Vol 3 Part C 11). Only the significant part of `advertising` is kept, so its
    /// padding or a malformed tail cannot swallow the scan response; look at the
    /// originals' ``malformations`` to diagnose each packet.
    public static func merged(advertising: AdvertisingData, scanResponse: AdvertisingData) -> AdvertisingData {
        if scanResponse.bytes.isEmpty { return advertising }
        var bytes = [UInt8]()
        bytes.reserveCapacity(advertising.significantEnd + scanResponse.bytes.count)
        bytes.append(contentsOf: advertising.bytes[..<advertising.significantEnd])
        bytes.append(contentsOf: scanResponse.bytes)
        return AdvertisingData(bytes)
    }
}

extension AdvertisingData: CustomStringConvertible {
    /// The hex bytes, e.g. "020106 03030D18", one group per structure.
    public var description: String {
        var groups = structures.map { Hex.string(bytes[$0.offset..<($0.data.endIndex)]) }
        if significantEnd < bytes.count { groups.append(Hex.string(bytes[significantEnd...])) }
        return groups.joined(separator: " ")
    }
}
