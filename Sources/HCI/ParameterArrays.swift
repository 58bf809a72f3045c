import BluetoothCore

// Parameter arrays (Core Vol 4 Part E 5.2): a one-octet count (Num_Reports, Num_Handles,
// Num_Sets), then that many entries. Core 5.x lays them out entry by entry
// (Parameter_A[0], Parameter_B[0], Parameter_A[1], ...), which is also what controllers
// send; the field-by-field layout suggested by older editions is not used.

extension ByteReader {
    /// The count octet, then that many entries read by `readEntry`.
    ///
    /// The count is checked against the bytes present (`minimumEntrySize` each, the size of
    /// an entry whose variable parts are empty) before anything is allocated, so a corrupt
    /// count costs an error, not memory. Only bytes present are checked, not the
    /// specification's ranges (Num_Reports 1...25): a controller that bends those still
    /// delivers readable entries.
    mutating func readParameterArray<Entry>(
        minimumEntrySize: Int,
        _ readEntry: (inout ByteReader) throws(DecodeError) -> Entry
    ) throws(DecodeError) -> [Entry] {
        let count = Int(try readUInt8())
        guard count * minimumEntrySize <= remaining else {
            throw .lengthMismatch(declared: count * minimumEntrySize, actual: remaining)
        }
        var entries: [Entry] = []
        entries.reserveCapacity(count)
        for _ in 0..<count { entries.append(try readEntry(&self)) }
        return entries
    }
}

extension ByteWriter {
    /// The count octet, then the entries. At most 255 entries fit the count; more are not
    /// encoded.
    mutating func writeParameterArray<Entry>(_ entries: [Entry], _ writeEntry: (Entry, inout ByteWriter) -> Void) {
        let encoded = entries.prefix(255)
        write(UInt8(encoded.count))
        for entry in encoded { writeEntry(entry, &self) }
    }
}
