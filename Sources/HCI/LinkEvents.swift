import BluetoothCore

// Events about an existing connection's lifetime and security (Core Vol 4 Part E 7.7).

extension HCIEvent {
    /// Disconnection Complete (7.7.5).
    public struct DisconnectionComplete: HCIEventParameters {
        public static let eventCode = HCIEvent.Code.disconnectionComplete

        public var status: HCIErrorCode
        /// 12 bits; higher bits are dropped.
        public var connectionHandle: UInt16
        /// Why the link ended, e.g. ``HCIErrorCode/remoteUserTerminatedConnection``.
        public var reason: HCIErrorCode

        public init(status: HCIErrorCode, connectionHandle: UInt16, reason: HCIErrorCode) {
            self.status = status
            self.connectionHandle = connectionHandle & connectionHandleMask
            self.reason = reason
        }

        public init(decoding reader: inout ByteReader) throws(DecodeError) {
            status = try reader.readErrorCode()
            connectionHandle = try reader.readMaskedConnectionHandle()
            reason = try reader.readErrorCode()
        }

        public func encode(into writer: inout ByteWriter) {
            writer.write(status)
            writer.writeMaskedConnectionHandle(connectionHandle)
            writer.write(reason)
        }
    }

    /// Encryption Change, v1 (7.7.8, code 0x08) and v2 (7.7.8, code 0x59).
    ///
    /// One type for both versions because they differ only by the trailing
    /// Encryption_Key_Size: ``keySize`` is nil for v1 and set for v2, and that choice alone
    /// decides which event code the value encodes with, so both round-trip exactly.
    public struct EncryptionChange: HCIEventParameters {
        /// The v1 code; ``eventCode-swift.property`` gives the code of a particular value.
        public static let eventCode = HCIEvent.Code.encryptionChangeV1

        public var status: HCIErrorCode
        /// 12 bits; higher bits are dropped.
        public var connectionHandle: UInt16
        /// Encryption_Enabled: 0x00 off, 0x01 on (AES-CCM on LE), 0x02 on with AES-CCM (BR/EDR).
        public var encryptionEnabled: UInt8
        /// Encryption_Key_Size in octets, v2 only.
        public var keySize: UInt8?

        public init(status: HCIErrorCode, connectionHandle: UInt16, encryptionEnabled: UInt8, keySize: UInt8? = nil) {
            self.status = status
            self.connectionHandle = connectionHandle & connectionHandleMask
            self.encryptionEnabled = encryptionEnabled
            self.keySize = keySize
        }

        public var isEncrypted: Bool { encryptionEnabled != 0 }

        /// 0x08 without a key size, 0x59 with one.
        public var eventCode: UInt8 {
            keySize == nil ? HCIEvent.Code.encryptionChangeV1 : HCIEvent.Code.encryptionChangeV2
        }

        /// Decodes either version, telling them apart by length (4 or 5 bytes) because the
        /// protocol's initializer does not see the event code. ``HCIEvent`` uses the code.
        public init(decoding reader: inout ByteReader) throws(DecodeError) {
            try self.init(decoding: &reader, withKeySize: reader.remaining >= 5)
        }

        init(decoding reader: inout ByteReader, withKeySize: Bool) throws(DecodeError) {
            status = try reader.readErrorCode()
            connectionHandle = try reader.readMaskedConnectionHandle()
            encryptionEnabled = try reader.readUInt8()
            keySize = withKeySize ? try reader.readUInt8() : nil
        }

        public func encode(into writer: inout ByteWriter) {
            writer.write(status)
            writer.writeMaskedConnectionHandle(connectionHandle)
            writer.write(encryptionEnabled)
            if let keySize { writer.write(keySize) }
        }
    }

    /// Encryption Key Refresh Complete (7.7.39): an encrypted link was re-keyed (on LE, after
    /// an encryption pause and resume with a new key).
    public struct EncryptionKeyRefreshComplete: HCIEventParameters {
        public static let eventCode = HCIEvent.Code.encryptionKeyRefreshComplete

        public var status: HCIErrorCode
        /// 12 bits; higher bits are dropped.
        public var connectionHandle: UInt16

        public init(status: HCIErrorCode, connectionHandle: UInt16) {
            self.status = status
            self.connectionHandle = connectionHandle & connectionHandleMask
        }

        public init(decoding reader: inout ByteReader) throws(DecodeError) {
            status = try reader.readErrorCode()
            connectionHandle = try reader.readMaskedConnectionHandle()
        }

        public func encode(into writer: inout ByteWriter) {
            writer.write(status)
            writer.writeMaskedConnectionHandle(connectionHandle)
        }
    }
}
