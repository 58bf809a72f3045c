import BluetoothCore

/// One SMP PDU (Core Vol 3 Part H 3.5, 3.6), the payload of a B-frame on the Security
/// Manager channel (CID 0x0006). Every code of LE has a case; values are numbers
/// (``SMPValue128``, ``P256PublicKey``), converted from the air's little-endian order here
/// and nowhere else.
public enum SMPPDU: Hashable, Sendable, CustomStringConvertible {
    case pairingRequest(PairingFeatures)
    case pairingResponse(PairingFeatures)
    /// Mconfirm / Sconfirm (legacy), Cb / Cai / Cbi / OOB-less confirm (Secure Connections).
    case pairingConfirm(SMPValue128)
    /// Mrand / Srand (legacy), Na / Nb / Nai / Nbi (Secure Connections).
    case pairingRandom(SMPValue128)
    case pairingFailed(PairingFailedReason)
    /// The legacy LTK.
    case encryptionInformation(longTermKey: SMPValue128)
    /// EDIV and Rand identifying the legacy LTK just sent.
    case centralIdentification(encryptedDiversifier: UInt16, randomNumber: UInt64)
    case identityInformation(identityResolvingKey: SMPValue128)
    /// Public or static random identity address.
    case identityAddressInformation(DeviceAddress)
    case signingInformation(signatureKey: SMPValue128)
    case securityRequest(AuthenticationRequirements)
    case pairingPublicKey(P256PublicKey)
    case pairingDHKeyCheck(SMPValue128)
    case pairingKeypressNotification(KeypressNotificationType)

    public var code: SMPCode {
        switch self {
        case .pairingRequest: .pairingRequest
        case .pairingResponse: .pairingResponse
        case .pairingConfirm: .pairingConfirm
        case .pairingRandom: .pairingRandom
        case .pairingFailed: .pairingFailed
        case .encryptionInformation: .encryptionInformation
        case .centralIdentification: .centralIdentification
        case .identityInformation: .identityInformation
        case .identityAddressInformation: .identityAddressInformation
        case .signingInformation: .signingInformation
        case .securityRequest: .securityRequest
        case .pairingPublicKey: .pairingPublicKey
        case .pairingDHKeyCheck: .pairingDHKeyCheck
        case .pairingKeypressNotification: .pairingKeypressNotification
        }
    }

    /// Decodes one whole PDU. Throws ``SMPDecodeError/unknownCode(_:)`` for a code LE does
    /// not define (answered with Command Not Supported) and ``SMPDecodeError/malformed(_:_:)``
    /// for a wrong length or a value no reading of which is safe (answered with Invalid
    /// Parameters). Never traps.
    public init(decoding bytes: [UInt8]) throws(SMPDecodeError) {
        guard let first = bytes.first else { throw .empty }
        let code = SMPCode(rawValue: first)
        guard let length = code.pduLength else { throw .unknownCode(code) }
        guard bytes.count == length else {
            throw .malformed(code, .lengthMismatch(declared: length, actual: bytes.count))
        }
        var reader = ByteReader(bytes, range: 1..<bytes.count)
        do {
            self = try Self.decodeParameters(code, &reader)
            try reader.expectEnd()
        } catch {
            throw .malformed(code, error)
        }
    }

    private static func decodeParameters(_ code: SMPCode, _ reader: inout ByteReader) throws(DecodeError) -> SMPPDU {
        func value128(_ reader: inout ByteReader) throws(DecodeError) -> SMPValue128 {
            try SMPValue128(littleEndian: try reader.readBytes(16))
        }
        switch code {
        case .pairingRequest: return .pairingRequest(try PairingFeatures(decoding: &reader))
        case .pairingResponse: return .pairingResponse(try PairingFeatures(decoding: &reader))
        case .pairingConfirm: return .pairingConfirm(try value128(&reader))
        case .pairingRandom: return .pairingRandom(try value128(&reader))
        case .pairingFailed: return .pairingFailed(PairingFailedReason(rawValue: try reader.readUInt8()))
        case .encryptionInformation: return .encryptionInformation(longTermKey: try value128(&reader))
        case .centralIdentification:
            return .centralIdentification(encryptedDiversifier: try reader.readUInt16(), randomNumber: try reader.readUInt64())
        case .identityInformation: return .identityInformation(identityResolvingKey: try value128(&reader))
        case .identityAddressInformation:
            let type = try reader.readUInt8()
            guard type <= 1 else { throw .invalidValue(field: "identity address type", value: Int(type)) }
            let address = try BluetoothAddress(littleEndian: try reader.readBytes(6))
            return .identityAddressInformation(DeviceAddress(address, type: type == 0 ? .public : .random))
        case .signingInformation: return .signingInformation(signatureKey: try value128(&reader))
        case .securityRequest: return .securityRequest(AuthenticationRequirements(rawValue: try reader.readUInt8()))
        case .pairingPublicKey: return .pairingPublicKey(try P256PublicKey(littleEndian: try reader.readBytes(64)))
        case .pairingDHKeyCheck: return .pairingDHKeyCheck(try value128(&reader))
        default: return .pairingKeypressNotification(KeypressNotificationType(rawValue: try reader.readUInt8()))
        }
    }

    /// The PDU as sent: code, then the parameters least significant octet first.
    public func encode() -> [UInt8] {
        var writer = ByteWriter(capacity: code.pduLength ?? 17)
        writer.write(code.rawValue)
        switch self {
        case let .pairingRequest(features), let .pairingResponse(features): features.encode(into: &writer)
        case let .pairingConfirm(value), let .pairingRandom(value), let .pairingDHKeyCheck(value),
             let .encryptionInformation(value), let .identityInformation(value), let .signingInformation(value):
            writer.write(contentsOf: value.littleEndianBytes)
        case let .pairingFailed(reason): writer.write(reason.rawValue)
        case let .centralIdentification(ediv, rand):
            writer.write(ediv)
            writer.write(rand)
        case let .identityAddressInformation(address):
            writer.write(UInt8(address.type.isRandom ? 1 : 0))
            writer.write(contentsOf: address.address.littleEndianBytes)
        case let .securityRequest(requirements): writer.write(requirements.rawValue)
        case let .pairingPublicKey(key): writer.write(contentsOf: key.littleEndianBytes)
        case let .pairingKeypressNotification(type): writer.write(type.rawValue)
        }
        return writer.bytes
    }

    /// Names the PDU without printing key material.
    public var description: String {
        switch self {
        case let .pairingRequest(features), let .pairingResponse(features): "\(code) (\(features))"
        case let .pairingFailed(reason): "Pairing Failed (\(reason))"
        case let .securityRequest(requirements): "Security Request \(requirements)"
        case let .identityAddressInformation(address): "Identity Address Information \(address)"
        default: "\(code)"
        }
    }
}

/// Why bytes on the SMP channel are not an SMP PDU.
public enum SMPDecodeError: Error, Equatable, Sendable, CustomStringConvertible {
    case empty
    /// A code LE does not define: answered with Command Not Supported.
    case unknownCode(SMPCode)
    /// A defined code with the wrong length or a reserved value: Invalid Parameters.
    case malformed(SMPCode, DecodeError)

    /// The Pairing Failed reason that answers this PDU.
    public var pairingFailedReason: PairingFailedReason {
        switch self {
        case .unknownCode: .commandNotSupported
        case .empty, .malformed: .invalidParameters
        }
    }

    public var description: String {
        switch self {
        case .empty: "an empty SMP PDU"
        case let .unknownCode(code): "\(code) is not an LE SMP command"
        case let .malformed(code, error): "malformed \(code): \(error)"
        }
    }
}
