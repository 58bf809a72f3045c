import BluetoothCore
import GATT
import TestSupport
import Testing

/// Random bytes through every decoder: each must return a value or a DecodeError, and a
/// description, and never trap. Seeded, so a failure replays.
@Suite struct DecoderFuzzTests {
    @Test func everyDecoderIsTotal() async {
        await cpuBound {
            var random = SeededRandom(seed: 0x2A37_2904)
            let registry = CharacteristicValueDecoder.standard
            let uuids = registry.registeredUUIDs.sorted { $0.description < $1.description }
            var decoded = 0
            var rejected = 0
            for iteration in 0..<120_000 {
                await yieldPeriodically(iteration: iteration)
                // Mostly short inputs, where the boundaries are; now and then a long one.
                let bytes = iteration % 50 == 0 ? random.bytes(lengths: 0...600) : random.bytes(lengths: 0...24)
                let uuid = uuids[iteration % uuids.count]
                switch registry.decode(bytes, uuid: uuid) {
                case .success(let value)?:
                    decoded += 1
                    _ = value.description
                case .failure(let error)?:
                    rejected += 1
                    _ = error.description
                case nil:
                    Issue.record("no decoder for registered \(uuid)")
                }
                // The presentation-format fallback, with a random descriptor (reserved codes too).
                let descriptor = CharacteristicPresentationFormat(
                    format: PresentationFormatCode(rawValue: UInt8.random(in: 0...0x1F, using: &random)),
                    exponent: Int8.random(in: .min ... .max, using: &random),
                    unit: BluetoothUUID(UInt16.random(in: 0x2700...0x27FF, using: &random)),
                    namespace: UInt8.random(in: 0...2, using: &random),
                    namespaceDescription: UInt16.random(in: 0...0x200, using: &random))
                _ = descriptor.description
                if let value = try? FormattedValue(bytes: bytes, format: descriptor) { _ = value.description }
                // The codecs the GATT client uses.
                if let declaration = try? CharacteristicDeclaration(bytes: bytes) {
                    #expect(declaration.bytes == bytes)
                }
                _ = try? HeartRateMeasurement(bytes: bytes).description
            }
            #expect(decoded > 0 && rejected > 0)
        }
    }

    @Test func heartRateRoundTripsRandomMeasurements() async throws {
        var random = SeededRandom(seed: 72)
        for iteration in 0..<20_000 {
            await yieldPeriodically(iteration: iteration)
            let flags = HeartRateMeasurement.Flags(rawValue: UInt8.random(in: 0...0x1F, using: &random))
            let sixteen = flags.contains(.heartRateIsUInt16)
            let measurement = HeartRateMeasurement(
                flags: flags,
                heartRate: sixteen ? UInt16.random(in: 0...0xFFFF, using: &random) : UInt16.random(in: 0...0xFF, using: &random),
                energyExpended: flags.contains(.energyExpendedPresent) ? UInt16.random(in: 0...0xFFFF, using: &random) : nil,
                rrIntervals: flags.contains(.rrIntervalsPresent)
                    ? (0..<Int.random(in: 0...9, using: &random)).map { _ in UInt16.random(in: 0...0xFFFF, using: &random) } : [])
            #expect(try HeartRateMeasurement(bytes: measurement.bytes) == measurement)
        }
    }
}
