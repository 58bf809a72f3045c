import BareBLE
import BluetoothCore
import GATT
import ToolSupport

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
