import BluetoothCore
import Glibc

extension JSONValue {
    /// Larger files are refused before they are read whole.
    public static let maximumFileSize = 16 << 20

    /// The whole file at `path`, parsed.
    public init(contentsOf path: String) throws(ParseError) {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { throw ParseError(description: "cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw ParseError(description: "cannot read \(path): \(String(cString: strerror(errno)))") }
            if count == 0 { break }
            bytes += chunk[0..<count]
            guard bytes.count <= Self.maximumFileSize else { throw ParseError(description: "\(path) is larger than \(Self.maximumFileSize) bytes") }
        }
        try self.init(parsing: String(decoding: bytes, as: UTF8.self))
    }
}
