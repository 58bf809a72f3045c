import BareBLE
import BluetoothCore
import GATT
import ToolSupport

/// A value read (or the failure to read it) as the explorer, `read` and `subscribe`
/// print it: hex, and decoded when BareBLE knows the format.
struct ValueReading {
    var value: [UInt8]?
    var decoded: String?
    var decodeError: String?
    var error: PeripheralError?

    init(value: [UInt8], decoded: Result<DecodedValue, DecodeError>?) {
        self.value = value
        switch decoded {
        case .success(let decoded)?: self.decoded = decoded.description
        case .failure(let error)?: decodeError = "\(error)"
        case nil: break
        }
    }

    init(error: PeripheralError) {
        self.error = error
    }

    /// "42617265424C45  "BareBLE"", "(empty)", "error: ...".
    var text: String {
        if let error { return "error: " + userMessage(error) }
        guard let value else { return "-" }
        var line = value.isEmpty ? "(empty)" : Hex.string(value)
        if let decoded { line += "  " + decoded }
        if let decodeError { line += "  (does not decode: \(decodeError))" }
        return line
    }

    /// value (hex or null), decoded, and error with its ATT code when the read failed.
    var jsonMembers: [(String, JSONValue)] {
        var members: [(String, JSONValue)] = [("value", value.map { .string(Hex.string($0)) } ?? .null)]
        if let decoded { members.append(("decoded", .string(decoded))) }
        if let decodeError { members.append(("decodeError", .string(decodeError))) }
        if let error {
            members.append(("error", .string(userMessage(error))))
            members.append(("errorCode", error.errorCode.map { .int(Int($0.rawValue)) } ?? .null))
        }
        return members
    }
}

extension Peripheral {
    /// Reads `characteristic` for display; a failure becomes part of the reading unless the
    /// link ended (then nothing more can be read: it is thrown).
    func reading(_ characteristic: Characteristic) async throws -> ValueReading {
        try await reading { () async throws(PeripheralError) in
            try await readValue(for: characteristic)
            return ValueReading(value: characteristic.value ?? [], decoded: characteristic.decodedValue())
        }
    }

    func reading(_ descriptor: Descriptor) async throws -> ValueReading {
        try await reading { () async throws(PeripheralError) in
            try await readValue(for: descriptor)
            return ValueReading(value: descriptor.value ?? [], decoded: descriptor.decodedValue())
        }
    }

    private func reading(_ read: () async throws(PeripheralError) -> ValueReading) async throws -> ValueReading {
        do {
            return try await read()
        } catch {
            if error.disconnectReason != nil { throw ToolError(userMessage(error)) }
            return ValueReading(error: error)
        }
    }
}
