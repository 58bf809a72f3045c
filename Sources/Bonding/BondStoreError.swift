import BluetoothCore
import Glibc

/// Why the bond store could not do what was asked, in words that say what to do next.
public enum BondStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file exists but is not a bond file this version can trust: truncated, not JSON,
    /// a field out of range. It was left exactly as it was.
    case corrupt(path: String, reason: String)
    /// The file names a format version this BareBLE does not read (a newer one wrote it).
    case unsupportedVersion(path: String, version: Int)
    /// A system call failed.
    case system(operation: String, path: String, errno: Int32)
    /// The file belongs to another local identity than the one it is named after (copied
    /// or renamed by hand).
    case identityMismatch(path: String, stored: DeviceAddress)
    /// Several random static identities are stored and none was named.
    case ambiguousIdentity(directory: String, candidates: [DeviceAddress])
    /// The address is not one a local identity can have (an RPA, a non-resolvable address).
    case invalidIdentity(DeviceAddress)
    /// The new set of bonds would make a file larger than the store reads back; nothing
    /// was written.
    case tooLarge(path: String, bytes: Int, bonds: Int)
    /// A pairing's keys were weaker than those of the bond already stored for the identity
    /// the peer gave (`shortfall` says how); that bond was kept and the new keys not stored.
    case strongerBondKept(peer: DeviceAddress, shortfall: String)
    /// Another process held the bond directory's lock for all of `after`.
    case lockTimedOut(directory: String, after: Duration)
    /// A bond the file could not read back (`reason`: which field); nothing was written.
    case invalidBond(peer: DeviceAddress, reason: String)

    public var description: String {
        switch self {
        case let .corrupt(path, reason):
            return "the bond file \(path) is damaged (\(reason)); it was left untouched. "
                + "Restore it from a backup, or move it aside (mv \(path) \(path).broken) to start with no bonds "
                + "for this identity: bonded peers must then pair again."
        case let .unsupportedVersion(path, version):
            return "the bond file \(path) has format version \(version), but this BareBLE reads version "
                + "\(BondFileFormat.version) only; it was left untouched. Use the BareBLE that wrote it, "
                + "or move it aside to start with no bonds."
        case let .system(operation, path, code):
            return "cannot \(operation) \(path): \(Self.explain(code))"
        case let .identityMismatch(path, stored):
            return "the bond file \(path) holds the bonds of \(stored), not of the identity its name says; "
                + "it was left untouched: rename it to match, or move it aside."
        case let .ambiguousIdentity(directory, candidates):
            return "\(directory) holds bonds for several random static identities "
                + "(\(candidates.map(\.description).joined(separator: ", "))): name the one to use."
        case let .tooLarge(path, bytes, bonds):
            return "\(bonds) bonds would make \(path) \(bytes) bytes, more than the \(AtomicFile.maximumSize) a bond file may have; "
                + "nothing was written. Remove bonds that are no longer used (bareble-central bonds list, bonds remove)."
        case let .strongerBondKept(peer, shortfall):
            return "the pairing's keys were not stored: \(peer) already has a bond with stronger keys, which was kept "
                + "(this pairing: \(shortfall)). If that is really the same device, remove its bond "
                + "(bareble-central bonds remove \(peer.address)) and pair again."
        case let .invalidBond(peer, reason):
            return "the bond of \(peer) was not stored: \(reason); the bond file was left as it was. "
                + "The Bond was built wrong by the program saving it: a Long Term Key has 7 ... 16 octets."
        case let .lockTimedOut(directory, after):
            return "another process has held the lock of the bond directory \(directory) for \(after): nothing was "
                + "read or written. A BareBLE tool stopped with Ctrl-Z (resume it with fg), or one stuck writing to a "
                + "hung file system, keeps it; `fuser -v \(directory)` names it. Then try again."
        case let .invalidIdentity(address):
            return "\(address) cannot be a local identity address: use the controller's public address "
                + "or a random static address (top two bits 0b11)."
        }
    }

    /// errno in words, with the usual way out.
    static func explain(_ code: Int32) -> String {
        let text = strerror(code).map { String(cString: $0) } ?? "errno \(code)"
        switch code {
        case EACCES, EPERM:
            return "\(text): the bond directory must belong to the user running BareBLE (mode 0700), "
                + "or choose another with --bond-dir"
        case ENOSPC, EDQUOT:
            return "\(text): free some space; the previous bonds are still intact"
        case EROFS:
            return "\(text): the file system is read-only; choose a writable --bond-dir"
        case ENOTDIR:
            return "\(text): a path component is a file, not a directory; choose another --bond-dir"
        default:
            return text
        }
    }
}
