import BluetoothCore
import Testing

/// `Hex.string` writes straight into the string's storage, its length worked out first:
/// these check that length and the digits against the obvious construction.
struct HexTests {
    /// What `Hex.string` must give, built one character at a time.
    static func expected(_ bytes: [UInt8], separator: String) -> String {
        let digits = Array("0123456789ABCDEF")
        return bytes.map { String([digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]]) }.joined(separator: separator)
    }

    @Test func emptyAndSingleBytesNeedNoSeparator() {
        #expect(Hex.string([UInt8]()) == "")
        #expect(Hex.string([UInt8](), separator: ":") == "")
        #expect(Hex.string([0x00], separator: ":") == "00")
        #expect(Hex.string(CollectionOfOne(0xAB)) == "AB")
    }

    @Test(arguments: ["", " ", ":", " - ", "→"])
    func everyLengthAndSeparatorMatchesTheObviousConstruction(separator: String) {
        var generator = SystemRandomNumberGenerator()
        for count in 0...70 {
            let bytes = (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
            let text = Hex.string(bytes, separator: separator)
            #expect(text == Self.expected(bytes, separator: separator))
            #expect(text.utf8.count == 2 * count + max(0, count - 1) * separator.utf8.count)
        }
    }

    @Test func slicesAndReversedCollectionsReadTheirOwnElements() {
        let bytes: [UInt8] = [0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF]
        #expect(Hex.string(bytes[2..<5]) == "456789")
        #expect(Hex.string(bytes.reversed(), separator: ":") == "EF:CD:AB:89:67:45:23:01")
        #expect(Hex.string(bytes.prefix(0), separator: " ") == "")
    }
}
