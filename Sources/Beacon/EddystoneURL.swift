import BluetoothCore

/// Eddystone-URL (frame type 0x10): a compressed URL. This is Eddystone's own compression,
/// not the SIG URI AD type's scheme table: one octet for the scheme (four choices) and
/// single octets 0x00...0x0D for common top-level domains, with and without a trailing
/// slash. Everything else is carried as printable ASCII, at most 17 octets after the scheme.
public struct EddystoneURL: Sendable, Hashable, CustomStringConvertible {
    public static let frameType: UInt8 = 0x10
    public static let maximumEncodedLength = 17

    /// Scheme prefix codes, by code.
    public static let schemes = ["http://www.", "https://www.", "http://", "https://"]
    /// Expansion codes 0x00...0x0D, by code.
    public static let expansions = [
        ".com/", ".org/", ".edu/", ".net/", ".info/", ".biz/", ".gov/",
        ".com", ".org", ".edu", ".net", ".info", ".biz", ".gov",
    ]

    /// Calibrated TX power in dBm as received at 0 m.
    public var txPower: Int8
    /// The full URL, scheme and expansions spelled out.
    public var url: String

    /// Checked: the URL must compress into Eddystone-URL's 17 octets and the TX power
    /// must be -127...20 dBm.
    public init(txPower: Int, url: String) throws(BeaconEncodingError) {
        self.txPower = try checkedPower(txPower, field: "TX power")
        _ = try Self.encode(url)
        self.url = url
    }

    private init(unchecked txPower: Int8, url: String) {
        self.txPower = txPower
        self.url = url
    }

    /// The scheme code and the encoded octets after it.
    ///
    /// Greedy: the longest scheme that prefixes the URL, then at each position the longest
    /// expansion that matches (".com/" before ".com"), else the character itself. Greedy is
    /// optimal here because no expansion is a prefix of another except its own slash form.
    public static func encode(_ url: String) throws(BeaconEncodingError) -> (scheme: UInt8, encoded: [UInt8]) {
        let bytes = Array(url.utf8)
        // Longest first so "https://www." wins over "https://".
        let byLength = schemes.enumerated().sorted { $0.element.utf8.count > $1.element.utf8.count }
        guard let scheme = byLength.first(where: { bytes.starts(with: $0.element.utf8) }) else {
            throw .unknownURLScheme(url)
        }
        let expansionBytes = expansions.map { Array($0.utf8) }
        var encoded: [UInt8] = []
        var index = scheme.element.utf8.count
        while index < bytes.count {
            var best: (code: Int, length: Int)?
            for (code, expansion) in expansionBytes.enumerated()
            where expansion.count > (best?.length ?? 0) && bytes[index...].starts(with: expansion) {
                best = (code, expansion.count)
            }
            if let best {
                encoded.append(UInt8(best.code))
                index += best.length
                continue
            }
            let byte = bytes[index]
            guard (0x21...0x7E).contains(byte) else {
                throw .unencodableURLCharacter(Self.character(in: url, atUTF8Offset: index), url: url)
            }
            encoded.append(byte)
            index += 1
        }
        guard encoded.count <= maximumEncodedLength else { throw .urlTooLong(url, encodedLength: encoded.count) }
        return (UInt8(scheme.offset), encoded)
    }

    /// The URL back from a scheme code and encoded octets; what breaks the format is a
    /// malformation, never a guess.
    public static func decode(scheme: UInt8, encoded: ArraySlice<UInt8>) -> Result<String, BeaconMalformation> {
        guard Int(scheme) < schemes.count else { return .failure(.unknownURLScheme(scheme)) }
        var url = schemes[Int(scheme)]
        for (offset, byte) in encoded.enumerated() {
            if Int(byte) < expansions.count {
                url += expansions[Int(byte)]
            } else if (0x21...0x7E).contains(byte) {
                url.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                return .failure(.invalidURLByte(byte, offset: offset))
            }
        }
        return .success(url)
    }

    public var frameBytes: [UInt8] {
        // An instance made by the checked initialiser always encodes; one whose `url` was
        // changed afterwards and no longer does yields an empty body, which
        // `advertisingData()` refuses by re-encoding.
        let (scheme, encoded) = (try? Self.encode(url)) ?? (0, [])
        return [Self.frameType, UInt8(bitPattern: txPower), scheme] + encoded
    }

    static func decode(frame data: [UInt8]) -> BeaconDecoding<EddystoneURL> {
        guard (3...3 + maximumEncodedLength).contains(data.count) else {
            return .malformed(.wrongLength(frame: "Eddystone-URL", expected: 3...(3 + maximumEncodedLength), actual: data.count))
        }
        switch decode(scheme: data[2], encoded: data[3...]) {
        case let .success(url): return .frame(EddystoneURL(unchecked: Int8(bitPattern: data[1]), url: url))
        case let .failure(reason): return .malformed(reason)
        }
    }

    public var description: String { "Eddystone-URL \(url) TX power \(txPower) dBm at 0 m" }

    /// The whole character that holds the UTF-8 octet at `offset`, for the error message.
    private static func character(in text: String, atUTF8Offset offset: Int) -> Character {
        var position = 0
        for character in text {
            position += character.utf8.count
            if offset < position { return character }
        }
        return "?"
    }
}
