import Logging

// The two rules every layer logs its drops by, so that a log line can be matched to the
// counter in the layer's statistics (the metadata key is the counter's name).

extension Logger {
    /// Peer or controller input that was malformed or unexpected and was dropped: one
    /// warning per occurrence, with the running count under `counter`. Nothing is built when
    /// warnings are off.
    public func droppedInput(
        _ message: @autoclosure () -> Logger.Message, counter: String, count: Int,
        metadata: @autoclosure () -> Logger.Metadata = [:],
        file: String = #fileID, function: String = #function, line: UInt = #line
    ) {
        guard logLevel <= .warning else { return }
        var all = metadata()
        all[counter] = "\(count)"
        warning(message(), metadata: all, file: file, function: function, line: line)
    }

    /// Something dropped because a bounded queue was full (a reader fell behind, a peer
    /// flooded us): a warning when the running count reaches 1, 2, 4, 8, ..., so a flood
    /// costs a few lines, not one per drop, and the count still shows how bad it got.
    /// `dropped` were counted at once: the line is written when the count passed a power
    /// of two on its way from `count - dropped` to `count`.
    @inlinable
    public func droppedForOverflow(
        _ message: @autoclosure () -> Logger.Message, counter: String, count: Int, dropped: Int = 1,
        metadata: @autoclosure () -> Logger.Metadata = [:],
        file: String = #fileID, function: String = #function, line: UInt = #line
    ) {
        guard count > 0, dropped > 0 else { return }
        let power = 1 << (Int.bitWidth - 1 - count.leadingZeroBitCount)
        guard power > count - dropped else { return }
        droppedInput(message(), counter: counter, count: count, metadata: metadata(), file: file, function: function, line: line)
    }
}

extension Logger.MetadataValue {
    /// A connection handle, an attribute handle or a code as the specification prints it:
    /// "0x0040".
    public static func hex(_ value: UInt16) -> Logger.MetadataValue {
        .string("0x" + Hex.string(value))
    }

    public static func hex(_ value: UInt8) -> Logger.MetadataValue {
        .string("0x" + Hex.string([value]))
    }

    /// The first 32 octets of a dropped packet in hex, "..." after them when there were more:
    /// enough to recognise it, bounded whatever the peer sent.
    public static func prefix(_ bytes: [UInt8]) -> Logger.MetadataValue {
        .string(Hex.string(bytes.prefix(32), separator: " ") + (bytes.count > 32 ? " ..." : ""))
    }
}
