import BluetoothCore
import GATT
import Glibc

/// The GATT databases a ``Central`` has discovered, per peer, each with its Database Hash
/// (GATT Caching, Core 5.4 Vol 3 Part G 2.5.2): handed to
/// ``GATTClient/discover(remembered:)`` on the next connection, which reads the hash and
/// skips discovery when it is unchanged.
///
/// In memory for the Central's lifetime, and, given a directory, also in one small text
/// file per peer (``GATTDatabase/text``) so a later program run skips discovery too. A
/// remembered copy is only ever used after the peer's current hash matched it, so a stale
/// or foreign file costs one discovery, never a wrong database; a file that does not read
/// back is ignored.
public final class GATTCache: Sendable {
    /// Where the files live, or nil for memory only.
    public let directory: String?
    private let databases = Lock<[DeviceAddress: GATTDatabase]>([:])

    public init(directory: String? = nil) {
        self.directory = directory
    }

    public func database(for peer: DeviceAddress) -> GATTDatabase? {
        if let known = databases.withLock({ $0[peer] }) { return known }
        guard let path = path(for: peer), let text = Self.read(path), let stored = GATTDatabase(text: text),
              stored.databaseHash != nil
        else { return nil }
        databases.withLock { $0[peer] = stored }
        return stored
    }

    /// Remembers `database` when it carries a Database Hash (without one a remembered copy
    /// could never be confirmed, so it would only cost memory). A file that cannot be
    /// written leaves the memory copy, which is all the cache promises.
    public func remember(_ database: GATTDatabase, for peer: DeviceAddress) {
        guard database.databaseHash != nil else { return }
        let changed = databases.withLock { databases in
            defer { databases[peer] = database }
            return databases[peer] != database
        }
        if changed, let path = path(for: peer) { Self.write(database.text, to: path) }
    }

    public func forget(_ peer: DeviceAddress) {
        _ = databases.withLock { $0.removeValue(forKey: peer) }
        if let path = path(for: peer) { unlink(path) }
    }

    /// The peers remembered in memory (files of earlier runs are read when asked for).
    public var peers: [DeviceAddress] {
        databases.withLock { Array($0.keys) }.sorted { $0.description < $1.description }
    }

    /// "C4-4B-4D-00-00-01-random.gatt" in the directory.
    func path(for peer: DeviceAddress) -> String? {
        guard let directory else { return nil }
        let name = peer.address.description.replacing(":", with: "-") + "-" + peer.type.description.replacing(" ", with: "-")
        return directory + "/" + name + ".gatt"
    }

    /// The file's text, or nil (missing, unreadable, over 1 MB: no real database is).
    static func read(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while bytes.count <= 1 << 20 {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            if count < 0 { return nil }
            if count == 0 { return String(decoding: bytes, as: UTF8.self) }
            bytes += buffer[0..<count]
        }
        return nil
    }

    /// Writes through a temporary file and a rename, so a reader never sees half a file;
    /// creates the directory (one level) when missing.
    static func write(_ text: String, to path: String) {
        if let slash = path.lastIndex(of: "/") { mkdir(String(path[..<slash]), 0o755) }
        let temporary = path + ".\(getpid()).tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return }
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if written < 0, errno == EINTR { continue }
            if written <= 0 { break }
            offset += written
        }
        close(fd)
        if offset == bytes.count { rename(temporary, path) } else { unlink(temporary) }
    }
}
