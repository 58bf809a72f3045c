import BluetoothCore

extension ATTPermissions.Access {
    /// The Error Code a request for this access gets on a link protected as `security`, or
    /// nil when the link is protected enough (authorization is the store's to decide, after
    /// this). Core 5.4 Vol 3 Part C 10.3.1, Vol 3 Part F 3.4.1.1:
    /// - An unencrypted link: Insufficient Encryption (0x0F) when a long-term key exists,
    ///   because the client only has to start encryption; else Insufficient Authentication
    ///   (0x05), because it has to pair first.
    /// - An encrypted link whose key is not from an authenticated (or, where asked, Secure
    ///   Connections) pairing: Insufficient Authentication (0x05), since only a new pairing
    ///   helps.
    /// - A key shorter than asked: Encryption Key Size Too Short (0x0C).
    public func denial(on security: ATTLinkSecurity) -> ATTErrorCode? {
        guard protection > .none else { return nil }
        guard security.isEncrypted else {
            return security.hasLongTermKey ? .insufficientEncryption : .insufficientAuthentication
        }
        if protection >= .authentication, !security.isAuthenticated { return .insufficientAuthentication }
        if protection >= .secureConnections, !security.isSecureConnections { return .insufficientAuthentication }
        if security.keySize < minimumKeySize { return .encryptionKeySizeTooShort }
        return nil
    }
}

extension ATTPermissions {
    /// The access `operation` needs, or nil when the attribute forbids it.
    public func access(for operation: ATTOperation) -> Access? {
        switch operation {
        case .read: read
        case .write: write
        }
    }
}
