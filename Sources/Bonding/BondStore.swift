import BluetoothCore
import Glibc
import Logging
import SMP
import Synchronization

/// The bonds of one local identity, in one JSON file (``BondFileFormat``) of a directory
/// the user chooses (default ``BondDirectory/defaultPath``).
///
/// - Every change is a read-modify-write under an flock of the directory, so concurrent
///   writers (threads or processes) do not lose each other's bonds, and the write replaces
///   the file atomically (``AtomicFile/replace(_:in:with:temporaryName:)``): a crash or a
///   kill -9 at any instant leaves the old or the new bonds, never a mix or a torn file.
/// - A file that does not parse is never replaced: opening or changing it throws
///   ``BondStoreError/corrupt(path:reason:)`` and the bytes stay as they were, for the
///   user to restore or move aside.
/// - Files are mode 0600, the directory 0700 when created here: bond files hold keys.
public final class BondStore: Sendable {
    /// Which local identity's bonds to open.
    public enum Identity: Sendable, Hashable {
        /// The controller's public address (its BD_ADDR) is our identity.
        case `public`(BluetoothAddress)
        /// A random static identity: the given one, or when nil the one already stored in
        /// the directory (a new one is generated the first time).
        case randomStatic(BluetoothAddress?)
    }

    public let directory: String
    public let path: String
    /// How long a read or change waits for another process holding the directory's lock
    /// before it fails with ``BondStoreError/lockTimedOut(directory:after:)``.
    public let lockTimeout: Duration
    public static let defaultLockTimeout: Duration = .seconds(10)
    /// Our identity address and IRK, as stored (generated when the file was created).
    public let local: LocalIdentity
    /// Where saved and removed bonds, and failed saves, are logged.
    public let logger: Logger
    /// The bonds as last read or written, and the stamp of the file they came from.
    private let cached: Lock<(bonds: [Bond], stamp: FileStamp?)>

    /// Opens the bond file of `identity` in `directory`, creating the directory (0700) and
    /// the file (with a fresh IRK) when they do not exist yet.
    public init(
        directory: String = BondDirectory.defaultPath, identity: Identity, lockTimeout: Duration = defaultLockTimeout,
        logger: Logger = Logger(label: "bareble.bonding")
    ) throws(BondStoreError) {
        try AtomicFile.makeDirectory(directory)
        let lock = try DirectoryLock(directory, timeout: lockTimeout)
        var wanted: DeviceAddress?
        switch identity {
        case let .public(address):
            wanted = DeviceAddress(address, type: .public)
        case let .randomStatic(address?):
            wanted = DeviceAddress(address, type: .random)
        case .randomStatic(nil):
            let candidates = try Self.storedIdentities(in: directory).filter { $0.type == .random }
            guard candidates.count <= 1 else { throw .ambiguousIdentity(directory: directory, candidates: candidates) }
            wanted = candidates.first
        }
        let stored: StoredBonds
        let stamp: FileStamp?
        if let wanted, let existing = try Self.readStamped(directory: directory, identity: wanted) {
            (stored, stamp) = existing
        } else {
            let created = StoredBonds(local: try LocalIdentity.generate(address: wanted))
            stamp = try Self.write(created, directory: directory)
            stored = created
        }
        _ = consume lock
        self.directory = directory
        self.lockTimeout = lockTimeout
        self.logger = logger
        self.local = stored.local
        self.path = directory + "/" + Self.fileName(for: stored.local.address)
        self.cached = Lock((stored.bonds, stamp))
    }

    // MARK: Reading

    /// Every bond, in identity address order, as the file holds them now: when another
    /// process (a pairing tool, `bonds remove`) changed the file since this store last read
    /// or wrote it, it is read again (one stat per lookup tells). A file that was removed
    /// by hand holds no bonds, as the next write finds too; one that no longer parses is
    /// not taken (the bonds read before stay, with a warning), as a write would refuse it.
    public var bonds: [Bond] {
        cached.withLock { cache in
            let now = AtomicFile.stamp(path)
            guard now != cache.stamp else { return cache.bonds }
            // Without the directory's lock: every write renames a whole file into place,
            // so what is read is one complete version, and its own stamp comes with it.
            do throws(BondStoreError) {
                let stored = try Self.readStamped(directory: directory, identity: local.address)
                cache = (stored?.bonds.bonds ?? [], stored?.stamp)
            } catch {
                cache.stamp = now
                logger.warning(
                    "the bond file changed and cannot be read: the bonds read before stay in use, and no bond can be saved until the file is repaired or moved aside",
                    metadata: ["path": "\(path)", "error": "\(error)"])
            }
            return cache.bonds
        }
    }

    /// The bond of `address`: its identity address, or an RPA that resolves with a stored
    /// peer IRK (``BondResolver``).
    public func bond(for address: DeviceAddress) -> Bond? {
        resolver.bond(for: address)
    }

    /// A resolver over the current bonds, to hand to scan consumers and connectors.
    public var resolver: BondResolver { BondResolver(bonds: bonds) }

    // MARK: Changing

    /// Adds `bond`, replacing any bond with the same peer identity, unless `refusal` gives
    /// a reason not to replace the one the file holds for that peer (a weaker pairing over
    /// a stronger bond): then nothing is written and that reason is thrown. It is decided
    /// under the directory's lock, so a bond another process saved a moment before counts.
    public func save(_ bond: Bond, refusingIf refusal: (_ stored: Bond) -> BondStoreError? = { _ in nil }) throws(BondStoreError) {
        var refused: BondStoreError?
        do {
            try update { bonds throws(BondStoreError) in
                if let stored = bonds.first(where: { $0.peer == bond.peer }), let reason = refusal(stored) {
                    refused = reason
                    throw reason
                }
                // Last wins: `StoredBonds` keeps one bond per peer.
                bonds.append(bond)
            }
        } catch {
            if let refused {
                logger.warning("\(refused)", metadata: ["peer": "\(bond.peer)", "path": "\(path)"])
            } else {
                logger.error("bond not saved", metadata: ["peer": "\(bond.peer)", "path": "\(path)", "error": "\(error)"])
            }
            throw error
        }
        logger.debug("bond saved", metadata: ["peer": "\(bond.peer)", "path": "\(path)"])
    }

    /// Removes the bond of `peer` (an identity address, or an RPA that resolves to one) and
    /// what was kept beside it (attachments); false when there was none.
    @discardableResult
    public func remove(_ peer: DeviceAddress) throws(BondStoreError) -> Bool {
        var removed: DeviceAddress?
        try update { bonds in
            let identity = BondResolver(bonds: bonds).bond(for: peer)?.peer ?? peer
            let before = bonds.count
            bonds.removeAll { $0.peer == identity }
            if bonds.count != before { removed = identity }
        }
        guard let removed else { return false }
        logger.debug("bond removed", metadata: ["peer": "\(removed)", "path": "\(path)"])
        try removeAttachments(of: removed)
        return true
    }

    /// One read-modify-write of the whole set: `change` sees the bonds as the file holds
    /// them now and its result is written atomically. Nothing is written when the file
    /// cannot be read or `change` throws.
    public func update(_ change: (inout [Bond]) throws(BondStoreError) -> Void) throws(BondStoreError) {
        let lock = try DirectoryLock(directory, timeout: lockTimeout)
        // An absent file (removed by hand) is an empty set for our identity, which this
        // write recreates.
        var stored = try Self.read(directory: directory, identity: local.address) ?? StoredBonds(local: local)
        try change(&stored.bonds)
        stored = StoredBonds(local: stored.local, bonds: stored.bonds)
        let stamp = try Self.write(stored, directory: directory)
        // Under the lock: set after it, a slower writer could put back an older set than
        // the one the file holds (another thread's bond missing from memory until the next
        // write, its reconnection refused as if it had no bond).
        cached.withLock { $0 = (stored.bonds, stamp) }
        _ = consume lock
    }

    // MARK: Files

    /// "F00D00000001.public.json": one file per local identity.
    public static func fileName(for identity: DeviceAddress) -> String {
        let hex = Hex.string(identity.address.littleEndianBytes.reversed())
        return "\(hex).\(identity.type.isRandom ? "random" : "public").json"
    }

    static func identity(fromFileName name: String) -> DeviceAddress? {
        let parts = name.split(separator: ".")
        guard parts.count == 3, parts[2] == "json", parts[0].count == 12, let value = UInt64(parts[0], radix: 16) else { return nil }
        switch parts[1] {
        case "public": return DeviceAddress(BluetoothAddress(value), type: .public)
        case "random": return DeviceAddress(BluetoothAddress(value), type: .random)
        default: return nil
        }
    }

    /// The local identities that have a bond file in `directory`.
    public static func storedIdentities(in directory: String) throws(BondStoreError) -> [DeviceAddress] {
        try AtomicFile.names(in: directory).compactMap(identity(fromFileName:))
    }

    /// Every bond file in `directory`, each parsed or with the error that stopped it (for
    /// listing: one damaged file must not hide the others).
    public static func readAll(directory: String) throws(BondStoreError) -> [(path: String, contents: Result<StoredBonds, BondStoreError>)] {
        try storedIdentities(in: directory).map { identity in
            let path = directory + "/" + fileName(for: identity)
            do throws(BondStoreError) {
                guard let stored = try read(directory: directory, identity: identity) else {
                    return (path, .failure(.system(operation: "open", path: path, errno: ENOENT)))
                }
                return (path, .success(stored))
            } catch {
                return (path, .failure(error))
            }
        }
    }

    static func read(directory: String, identity: DeviceAddress) throws(BondStoreError) -> StoredBonds? {
        try readStamped(directory: directory, identity: identity)?.bonds
    }

    static func readStamped(directory: String, identity: DeviceAddress) throws(BondStoreError) -> (bonds: StoredBonds, stamp: FileStamp)? {
        let path = directory + "/" + fileName(for: identity)
        guard let (bytes, stamp) = try AtomicFile.readStamped(path) else { return nil }
        let stored = try BondFileFormat.decode(bytes, path: path)
        guard stored.local.address == identity else { throw .identityMismatch(path: path, stored: stored.local.address) }
        return (stored, stamp)
    }

    /// Writes the file of `stored`'s identity; the stamp of what was written (the caller
    /// holds the directory's lock, so nobody has replaced it since).
    @discardableResult
    static func write(_ stored: StoredBonds, directory: String) throws(BondStoreError) -> FileStamp? {
        let name = fileName(for: stored.local.address)
        let path = directory + "/" + name
        // What the reader would refuse is not written: the file as it was stays readable.
        if let invalid = stored.bonds.lazy.compactMap(BondFileFormat.unwritable).first { throw invalid }
        let bytes = BondFileFormat.encode(stored)
        guard bytes.count <= AtomicFile.maximumSize else {
            throw .tooLarge(path: path, bytes: bytes.count, bonds: stored.bonds.count)
        }
        try AtomicFile.replace(path, in: directory, with: bytes, temporaryName: ".\(name).tmp")
        return AtomicFile.stamp(path)
    }
}
