import BluetoothCore

// Data a layer above keeps per bonded peer beside the bond file (a GATT server's view of a
// bonded client: its CCCDs and Client Supported Features, Core 5.4 Vol 3 Part G 2.5.2.1),
// opaque to the store. One file per local identity, peer and name,
// "F00D00000001.public.C44B4D000201.random.NAME", written like the bond file (atomic
// replace under the directory lock); `identity(fromFileName:)` ignores these names.
extension BondStore {
    /// What was stored under `name` for `peer` (an identity address), or nil.
    public func attachment(_ name: String, for peer: DeviceAddress) throws(BondStoreError) -> [UInt8]? {
        try AtomicFile.read(directory + "/" + attachmentFileName(name, for: peer))
    }

    /// Replaces what is stored under `name` for `peer`.
    public func setAttachment(_ bytes: [UInt8], name: String, for peer: DeviceAddress) throws(BondStoreError) {
        let lock = try DirectoryLock(directory, timeout: lockTimeout)
        let file = attachmentFileName(name, for: peer)
        try AtomicFile.replace(directory + "/" + file, in: directory, with: bytes, temporaryName: file + ".tmp")
        _ = consume lock
    }

    /// Removes everything kept for `peer`, with its bond: a later bond with the same peer
    /// starts without the old one's state.
    func removeAttachments(of peer: DeviceAddress) throws(BondStoreError) {
        let lock = try DirectoryLock(directory, timeout: lockTimeout)
        let prefix = attachmentFileName("", for: peer)
        for name in try AtomicFile.names(in: directory) where name.hasPrefix(prefix) {
            try AtomicFile.remove(directory + "/" + name, in: directory)
        }
        _ = consume lock
    }

    func attachmentFileName(_ name: String, for peer: DeviceAddress) -> String {
        let local = Self.fileName(for: self.local.address).dropLast(".json".count)
        let hex = Hex.string(peer.address.littleEndianBytes.reversed())
        return "\(local).\(hex).\(peer.type.isRandom ? "random" : "public").\(name)"
    }
}
