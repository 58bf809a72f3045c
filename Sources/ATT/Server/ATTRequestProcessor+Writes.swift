import BluetoothCore

/// Decides a Signed Write Command (Core 5.4 Vol 3 Part F 3.4.5.4): checks its signature
/// with the CSRK of the peer's bond and its sign counter against the last one seen (Vol 3
/// Part H 2.4.5), both SMP's and the bond's, which ATT does not depend on. Returns the
/// protection the signing key carries (as if it were the link's: authenticated or not, its
/// key size) when the signature holds, nil when it does not or there is no CSRK.
public typealias ATTSignatureVerifier = @Sendable (SignedWriteCommand, ATTServerContext) async -> ATTLinkSecurity?

/// What became of a command: commands are never answered, so this is only counted.
enum ATTCommandOutcome: Sendable, Equatable {
    case performed
    /// Refused by a check or by the store (no answer is possible for a command).
    case refused
    /// A Signed Write Command whose signature did not verify, or with no key to verify it.
    case signatureRejected
    /// A command this server does not know (the Command Flag set), ignored (3.3.1).
    case unknown
}

extension ATTRequestProcessor {
    /// Write Command and Signed Write Command, with the checks a Write Request gets, but
    /// no error ever goes back (3.4.5.3).
    func perform(
        _ command: ATTPDU, context: ATTServerContext, verifier: ATTSignatureVerifier?
    ) async -> ATTCommandOutcome {
        let handle: UInt16, value: [UInt8], security: ATTLinkSecurity
        switch command {
        case .writeCommand(let c):
            (handle, value, security) = (c.attributeHandle, c.attributeValue, context.security)
        case .signedWriteCommand(let c):
            guard let verifier, let proven = await verifier(c, context) else { return .signatureRejected }
            // An encrypted link already vouches for the sender; on an open link the
            // signature is what does, with the strength of the key that made it.
            (handle, value, security) = (c.attributeHandle, c.attributeValue, context.security.isEncrypted ? context.security : proven)
        default:
            return .unknown
        }
        do {
            let attribute = try await writable(handle, context: context, security: security)
            try checkLength(value, at: handle)
            return await store.write(attribute, value: value, kind: .command, context: context) == nil ? .performed : .refused
        } catch {
            return .refused
        }
    }

    /// Execute Write (3.4.6.3). Flags 0x00 empties the queue; 0x01 composes each queued
    /// attribute's value, checks that each handle still holds the attribute its parts were
    /// prepared for (Invalid Handle, 0x01, after a database change), every offset (Invalid
    /// Offset, 0x07) and length (Invalid Attribute Value Length, 0x0D, past 512) before
    /// writing anything, then writes the
    /// values in the order their attributes were first prepared, as `.reliable`. The queue
    /// is empty afterwards whatever happened. Another Flags value is Invalid PDU (0x04)
    /// and leaves the queue as it was.
    ///
    /// A value is composed from nothing when its first part is at offset 0 (a long write),
    /// else from the attribute's current value; each part overwrites from its offset, which
    /// may not lie beyond what is composed so far.
    func executeWrite(
        _ flags: ExecuteWriteRequest.Flags, context: ATTServerContext, queue: inout ATTPrepareQueue
    ) async throws(ATTRequestFailure) {
        switch flags {
        case .cancelAllPreparedWrites:
            queue.removeAll()
            return
        case .immediatelyWriteAllPendingPreparedValues:
            break
        default:
            throw ATTRequestFailure(handle: 0, code: .invalidPDU)
        }
        var values: [(attribute: ATTAttribute, value: [UInt8])] = []
        for group in queue.takeAll() {
            let attribute = group.attribute
            // The parts were checked against the attribute there when they were prepared; the
            // database may have changed since (services added or removed), and writing them
            // into another attribute would pass round its permissions.
            guard try self.attribute(at: attribute.handle) == attribute else {
                throw ATTRequestFailure(handle: attribute.handle, code: .invalidHandle)
            }
            var value: [UInt8] = []
            if let first = group.parts.first, first.offset != 0 {
                switch await store.read(attribute, context: context) {
                case .success(let current): value = current
                case .failure(let code): throw ATTRequestFailure(handle: attribute.handle, code: code)
                }
            }
            for part in group.parts {
                let offset = Int(part.offset)
                guard offset <= value.count else { throw ATTRequestFailure(handle: attribute.handle, code: .invalidOffset) }
                let end = offset + part.value.count
                // Checked before growing, so a composed value never passes 512 octets.
                guard end <= ATTConstants.maximumAttributeValueLength else {
                    throw ATTRequestFailure(handle: attribute.handle, code: .invalidAttributeValueLength)
                }
                value.replaceSubrange(offset..<min(end, value.count), with: part.value)
            }
            values.append((attribute, value))
        }
        for (attribute, value) in values {
            if let code = await store.write(attribute, value: value, kind: .reliable, context: context) {
                throw ATTRequestFailure(handle: attribute.handle, code: code)
            }
        }
    }
}
